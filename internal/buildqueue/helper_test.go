package buildqueue

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a second process of the queue: with
// BUILDQUEUE_HELPER=DIR it waits for a turn in project DIR (joining by
// BUILDQUEUE_KEY when set), prints "admitted" or "joined RESULT" on stdout,
// then releases with BUILDQUEUE_RESULT when stdin says "release", or never.
func TestMain(m *testing.M) {
	if dir := os.Getenv("BUILDQUEUE_HELPER"); dir != "" {
		os.Exit(helper(dir))
	}
	os.Exit(m.Run())
}

func helper(dir string) int {
	q := New(Config{MaxBuilds: -1})
	t, err := q.Wait(context.Background(), Request{Project: dir, Name: "helper", Front: "test", Key: os.Getenv("BUILDQUEUE_KEY"),
		Report: func(s Status) { fmt.Println("status", s.Place) }})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	if res, ok := t.Joined(); ok {
		fmt.Println("joined", string(res))
		return 0
	}
	fmt.Println("admitted")
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if strings.TrimSpace(line) == "release" {
		var res []byte
		if r := os.Getenv("BUILDQUEUE_RESULT"); r != "" {
			res = []byte(r)
		}
		t.Release(res)
		fmt.Println("released")
	}
	return 0
}

// proc is a helper process.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// startHelper starts a helper process waiting in dir.
func startHelper(t *testing.T, dir string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "BUILDQUEUE_HELPER="+dir), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return p
}

// expect waits (at most 10 s) for a line of the helper that starts with prefix.
func (p *proc) expect(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("helper ended before printing %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("helper did not print %q within 10s", prefix)
		}
	}
}
