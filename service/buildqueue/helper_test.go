package buildqueue

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
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
	if out := os.Getenv("BUILDQUEUE_WRITER"); out != "" {
		os.Exit(writer(out))
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
	if out := os.Getenv("BUILDQUEUE_CHILD"); out != "" {
		if err := startChild(t, out, os.Getenv("BUILDQUEUE_SESSION") != ""); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
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

// The helper's command with BUILDQUEUE_CHILD=FILE: a shell that leads its
// own process group (with BUILDQUEUE_SESSION, its own session) and dies
// with the helper, as a build's command does, and starts a grandchild, the
// test binary as a writer, that appends to FILE every 20 ms. The shell
// prints "grandchild PID". Under a session the writer moves to a process
// group of its own in that session, as a shell's job does.
const childScript = `"$1" -test.run='^$' &
echo "grandchild $!"
wait`

func startChild(t *Turn, out string, session bool) error {
	cmd := exec.Command("sh", "-c", childScript, "sh", os.Args[0])
	cmd.Env = append(os.Environ(), "BUILDQUEUE_HELPER=", "BUILDQUEUE_WRITER="+out)
	if session {
		cmd.Env = append(cmd.Env, "BUILDQUEUE_NEWGROUP=1")
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = childAttr(session)
	if err := cmd.Start(); err != nil {
		return err
	}
	t.Started(cmd.Process.Pid, session)
	return nil
}

// writer is the grandchild of startChild: it appends a line to out every
// 20 ms, for at most two minutes, whatever hangs up.
func writer(out string) int {
	signal.Ignore(syscall.SIGHUP)
	if os.Getenv("BUILDQUEUE_NEWGROUP") != "" {
		if err := newGroup(); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			return 1
		}
	}
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return 1
		}
		_, _ = f.WriteString("x\n")
		f.Close()
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
