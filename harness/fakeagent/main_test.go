package fakeagent

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fakeagent": func() { os.Exit(Main(os.Args[1:])) },
		"waitport":  func() { os.Exit(WaitPortMain(os.Args[1:])) },
		"agentsend": func() { os.Exit(agentSend(os.Args[1:])) },
	})
}

// agentSend is a test-only script command
// "agentsend [-t TIMEOUT] PORTFILE EXPECT COMMAND": it connects, requires
// CONNECTED, sends COMMAND and prints every line until one contains EXPECT
// (exit 0), or exits 1 on EOF or timeout (default 10s).
func agentSend(args []string) int {
	fs := flag.NewFlagSet("agentsend", flag.ContinueOnError)
	timeout := fs.Duration("t", 10*time.Second, "")
	if fs.Parse(args) != nil || fs.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: agentsend [-t TIMEOUT] PORTFILE EXPECT COMMAND")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	port, err := WaitPortFile(ctx, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	nc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
	deadline, _ := ctx.Deadline()
	nc.SetDeadline(deadline)
	br := bufio.NewReader(nc)
	first, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, `{"level":"CONNECTED"`) {
		fmt.Fprintf(os.Stderr, "no handshake: %q %v\n", first, err)
		return 1
	}
	fmt.Fprintf(nc, "%s\n", fs.Arg(2))
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			fmt.Fprintf(os.Stderr, "agentsend: %v\n", err)
			return 1
		}
		fmt.Print(l)
		if strings.Contains(l, fs.Arg(1)) {
			return 0
		}
	}
}

func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{Dir: filepath.Join("testdata", "script")})
}

// TestRunInProcess drives the program entry with a cancellable context.
func TestRunInProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pf := filepath.Join(dir, "p", "agent.port")
	logf := filepath.Join(dir, "cmds.log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-portfile", pf, "-log", logf, "-heartbeat", "0", "-hold", "other",
			"-drop-reply", "BUILD:ok", "-workdir", "/w", "-watch", "/w/classes"}, strings.NewReader(""), &stdout, &stderr)
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), limit)
	defer wcancel()
	port, err := WaitPortFile(wctx, pf)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	if ev := c.next(); ev.Level != agentproto.LevelConnected {
		t.Fatalf("got %q", ev.Raw)
	}
	c.send("BUILD started request=a owner=me")
	c.send("BUILD ok request=b owner=other")
	got := c.probe()
	if len(got) != 1 || got[0] != "BUILD_REJECTED a started owner=me" {
		t.Fatalf("got %q", got)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := stdout.String(); got != "accepted=1\n" {
		t.Errorf("stdout %q, want the accepted count", got)
	}
	b, _ := os.ReadFile(logf)
	if string(b) != "BUILD started request=a owner=me\nBUILD ok request=b owner=other\nDOCTOR probe1\n" {
		t.Fatalf("log %q", b)
	}
	if _, err := os.Stat(pf); !os.IsNotExist(err) {
		t.Fatal("port file left behind")
	}
}

func TestRunUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-handshake", "nope"}, {"-accept", "maybe"}, {"-unwired", "brain"}, {"-reject", "start"},
		{"-drop-reply", "FOO"}, {"-drop-reply", "DOCTOR:ok"}, {"-drop-reply", "BUILD:done"}, {"-wrong-token", "X"}, {"-stage", "7"}, {"-hold", "a", "-legacy-hold"}, {"extra"}, {"-bogus"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

func TestRunStopsOnStdinEOF(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	pf := filepath.Join(t.TempDir(), "agent.port")
	if code := run(context.Background(), []string{"-stdin", "-portfile", pf, "-accept", "read-error", "-accept-delay", "1ms",
		"-handshake", "version-2", "-unwired", "verifier,scanner", "-stage", "3", "-silent-build"}, strings.NewReader(""), io.Discard, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(pf); !os.IsNotExist(err) {
		t.Fatal("port file left behind")
	}
}
