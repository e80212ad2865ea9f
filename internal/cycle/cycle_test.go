package cycle

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want error
	}{
		{[]string{"./gradlew", "--continuous", "classes"}, nil},
		{[]string{"gradle", "-t", "classes"}, nil},
		{[]string{"/opt/gradle-8.10/bin/gradle", "classes", "--continuous"}, nil},
		{[]string{`C:\p\GRADLEW.BAT`, "-t", "classes"}, nil},
		{[]string{"mvn", "-t", "compile"}, ErrNotGradle},
		{[]string{"./mvnw", "compile"}, ErrNotGradle},
		{[]string{"sh", "./gradlew", "-t"}, ErrNotGradle},
		{[]string{"gradle-wrapper", "-t"}, ErrNotGradle},
		{nil, ErrNotGradle},
		{[]string{"./gradlew", "classes"}, ErrNotContinuous},
		{[]string{"./gradlew", "--continuous=true", "classes"}, ErrNotContinuous},
		{[]string{"./gradlew", "-t", "--configuration-cache", "classes"}, ErrConfigurationCache},
		{[]string{"./gradlew", "-t", "--configuration-cache=true"}, ErrConfigurationCache},
		{[]string{"./gradlew", "-t", "-configuration-cache"}, ErrConfigurationCache},
		// Every spelling of continuous mode Gradle 4.4.1's parser accepts.
		{[]string{"gradle", "-qt", "classes"}, nil},
		{[]string{"gradle", "-tq", "classes"}, nil},
		{[]string{"gradle", "-continuous", "classes"}, nil},
		{[]string{"gradle", "classes", "-i", "-mt"}, nil},
		{[]string{"gradle", "test", "--tests", "Foo", "-t"}, nil},
		// Not continuous: values and task arguments that contain a t.
		{[]string{"gradle", "-xtest", "classes"}, ErrNotContinuous},
		{[]string{"gradle", "-Dt=1", "-Ptarget=x", "-Itools.gradle", "classes"}, ErrNotContinuous},
		{[]string{"gradle", "-stacktrace", "-status", "classes"}, ErrNotContinuous},
		{[]string{"gradle", "-t=x", "classes"}, ErrNotContinuous},
		{[]string{"gradle", "-t-not", "-qxt", "classes"}, ErrNotContinuous}, // Gradle's own errors
		{[]string{"gradle", "classes", "--", "-t"}, ErrNotContinuous},
		{[]string{"gradle", "classes", "--", "--configuration-cache", "-t"}, ErrNotContinuous},
	} {
		err := Check(tc.argv)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("Check(%q) = %v, want %v", tc.argv, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "--continuous") && !strings.Contains(err.Error(), "leave it out") {
			t.Errorf("Check(%q) = %q: does not say what to run instead", tc.argv, err)
		}
	}
}

// TestFinite: the guard of one build refuses a continuous Gradle command in
// every spelling Gradle accepts, naming the argument, and lets everything
// else through (docs/decisions.md#D20).
func TestFinite(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		flag string
	}{
		{[]string{"gradle", "-t", "classes"}, "-t"},
		{[]string{"./gradlew", "-qt", "classes"}, "-qt"},
		{[]string{"./gradlew", "-tq", "classes"}, "-tq"},
		{[]string{`C:\p\gradlew.bat`, "classes", "--continuous"}, "--continuous"},
		{[]string{"gradle", "-continuous", "classes"}, "-continuous"},
		{[]string{"gradle", "-xtest", "classes"}, ""},
		{[]string{"gradle", "classes", "--", "-t"}, ""},
		{[]string{"gradle", "classes"}, ""},
		{[]string{"mvn", "-t", "compile"}, ""}, // Maven's -t is --toolchains
		{nil, ""},
	} {
		err := Finite(tc.argv)
		var ce *ContinuousError
		switch {
		case tc.flag == "" && err != nil:
			t.Errorf("Finite(%q) = %v, want nil", tc.argv, err)
		case tc.flag != "" && (!errors.As(err, &ce) || ce.Flag != tc.flag || !errors.Is(err, ErrContinuous)):
			t.Errorf("Finite(%q) = %v, want a ContinuousError naming %s", tc.argv, err, tc.flag)
		}
	}
}

// TestArgvBeforeEndOfOptions: the channel's arguments go before a "--" that
// ends Gradle's options, where Gradle reads them as options.
func TestArgvBeforeEndOfOptions(t *testing.T) {
	c := open(t)
	ours := []string{"--init-script", c.script, "-Pbuildguard.cycleChannel=" + c.file, "-Dorg.gradle.configuration-cache=false"}
	for _, tc := range []struct{ argv, want []string }{
		{[]string{"gradle", "-t", "classes", "--"}, append(append([]string{"gradle", "-t", "classes"}, ours...), "--")},
		{[]string{"gradle", "-t", "test", "--", "--tests", "X"}, append(append([]string{"gradle", "-t", "test"}, ours...), "--", "--tests", "X")},
		{[]string{"gradle", "-t", "classes"}, append([]string{"gradle", "-t", "classes"}, ours...)},
	} {
		if got := c.Argv(tc.argv); !slices.Equal(got, tc.want) {
			t.Errorf("Argv(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// script is the init script's side of the wire, as a test client.
type script struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialScript(t *testing.T, c *Channel, secret string) *script {
	t.Helper()
	port, sec := channelFile(t, c)
	if secret == "" {
		secret = sec
	}
	nc, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	s := &script{t: t, nc: nc, br: bufio.NewReader(nc)}
	s.send("buildguard-cycle 1 " + secret + " start")
	return s
}

func (s *script) send(line string) {
	s.t.Helper()
	if _, err := s.nc.Write([]byte(line + "\n")); err != nil {
		s.t.Fatal(err)
	}
}

// read returns the next line, or "EOF" when the wrapper closed the connection.
func (s *script) read() string {
	s.t.Helper()
	line, err := s.br.ReadString('\n')
	if err != nil {
		return "EOF"
	}
	return strings.TrimSuffix(line, "\n")
}

// channelFile returns the port and secret the channel file gives the script.
func channelFile(t *testing.T, c *Channel) (port, secret string) {
	t.Helper()
	b, err := os.ReadFile(c.file)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "port="); ok {
			port = v
		}
		if v, ok := strings.CutPrefix(l, "secret="); ok {
			secret = v
		}
	}
	return port, secret
}

func open(t *testing.T) *Channel {
	t.Helper()
	c, err := Open(Config{Script: []byte("// script\n"), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func next(t *testing.T, c *Channel) *Cycle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cy, err := c.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return cy
}

func TestChannelCycle(t *testing.T) {
	c := open(t)
	argv := c.Argv([]string{"./gradlew", "-t", "classes"})
	want := []string{"./gradlew", "-t", "classes", "--init-script", c.script, "-Pbuildguard.cycleChannel=" + c.file, "-Dorg.gradle.configuration-cache=false"}
	if strings.Join(argv, " ") != strings.Join(want, " ") {
		t.Errorf("Argv = %q, want %q", argv, want)
	}
	for _, p := range []string{c.dir, c.file, c.script} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v: readable by others", p, perm)
		}
	}

	for i, finish := range []string{"finish ok", "finish failed", "", "garbage"} {
		n := i + 1
		s := dialScript(t, c, "")
		cy := next(t, c)
		if err := cy.Ack(n); err != nil {
			t.Fatal(err)
		}
		if got := s.read(); got != "ack "+itoa(n) {
			t.Fatalf("cycle %d: script read %q, want ack", n, got)
		}
		if finish == "" {
			s.nc.Close() // the Gradle JVM died mid-cycle
		} else {
			s.send(finish)
		}
		res, err := cy.Result(context.Background())
		want := map[string]Result{"finish ok": OK, "finish failed": Failed, "": Lost, "garbage": Lost}[finish]
		if err != nil || res != want {
			t.Fatalf("cycle %d: Result = %v, %v; want %v", n, res, err, want)
		}
		cy.Finish(n, res == OK)
		if finish == "" {
			continue
		}
		wantAns := "held " + itoa(n)
		if res == OK {
			wantAns = "released " + itoa(n)
		}
		if got := s.read(); got != wantAns {
			t.Errorf("cycle %d: script read %q, want %q", n, got, wantAns)
		}
		if got := s.read(); got != "EOF" {
			t.Errorf("cycle %d: connection still open after the answer (read %q)", n, got)
		}
	}

	c.Close()
	for _, p := range []string{c.dir, c.file, c.script} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind after Close: %v", p, err)
		}
	}
	if _, err := c.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close = %v, want ErrClosed", err)
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

// TestChannelRefusesStrangers: a connection without the run's secret, with
// a malformed or an over-long start line is closed unanswered and never
// becomes a cycle; the real script's cycle still does.
func TestChannelRefusesStrangers(t *testing.T) {
	c := open(t)
	port, secret := channelFile(t, c)
	for _, line := range []string{
		"buildguard-cycle 1 " + strings.Repeat("0", len(secret)) + " start",
		"buildguard-cycle 1 " + secret[:len(secret)-1] + " start",
		"buildguard-cycle 2 " + secret + " start",
		"buildguard-cycle 1 " + secret + " finish",
		"GET / HTTP/1.1",
		strings.Repeat("x", 2*MaxLine),
	} {
		nc, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		nc.Write([]byte(line + "\n"))
		b, err := bufio.NewReader(nc).ReadString('\n')
		if err == nil || b != "" {
			t.Errorf("start %.40q: answered %q, want the connection closed unanswered", line, b)
		}
		nc.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if cy, err := c.Next(ctx); err == nil {
		t.Fatalf("a stranger's connection became a cycle: %v", cy)
	}
	s := dialScript(t, c, "")
	cy := next(t, c)
	cy.Refuse("cycle 1: BUILD started was not acknowledged:\nrejected")
	if got := s.read(); got != "refused cycle 1: BUILD started was not acknowledged: rejected" {
		t.Errorf("script read %q, want the refusal on one line", got)
	}
	if got := s.read(); got != "EOF" {
		t.Errorf("connection still open after the refusal (read %q)", got)
	}
}

// TestChannelBoundsStrangers: connections without the run's secret cannot
// pile up (at most maxPending await their start line; more close the
// oldest), fill the log (the first few are logged, the rest counted) or
// keep the script's own connection out (docs/decisions.md#D23).
func TestChannelBoundsStrangers(t *testing.T) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	c, err := Open(Config{Script: []byte("// script\n"), TempDir: t.TempDir(), Logger: hclog.New(&hclog.LoggerOptions{
		Output: lockedWriter{&logMu, &logs}, Level: hclog.Warn,
	})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	port, _ := channelFile(t, c)
	dial := func() net.Conn {
		nc, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		nc.SetDeadline(time.Now().Add(20 * time.Second))
		return nc
	}
	const idle, garbage = 100, 50
	before := openFiles(t)
	for range idle {
		dial() // connects and says nothing
	}
	s := dialScript(t, c, "")
	cy := next(t, c) // accepted after every idle connection
	// The process holds both ends: the test's idle+1 and the channel's.
	if kept := openFiles(t) - before - (idle + 1); kept > maxPending+1 {
		t.Errorf("the channel keeps %d connections open after %d idle strangers, want at most %d and the cycle's", kept, idle, maxPending)
	}
	cy.Ack(1)
	if got := s.read(); got != "ack 1" {
		t.Errorf("script read %q, want ack 1", got)
	}
	for range garbage {
		nc := dial()
		nc.Write([]byte("GET / HTTP/1.1\n"))
		if b, err := bufio.NewReader(nc).ReadString('\n'); err == nil {
			t.Fatalf("a stranger was answered %q", b)
		}
	}
	logMu.Lock()
	perStranger := strings.Count(logs.String(), "did not start a cycle with this run's secret; closed it")
	logMu.Unlock()
	if perStranger > maxStrangerLogs {
		t.Errorf("%d log lines for %d strangers, want at most %d:\n%s", perStranger, garbage, maxStrangerLogs, logs.String())
	}
	cy.Close()
	c.Close()
	if !strings.Contains(logs.String(), "count=") {
		t.Errorf("Close did not log how many strangers were closed:\n%s", logs.String())
	}
}

// openFiles is the number of the process's open descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open descriptors: %v", err)
	}
	return len(fds)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// failingListener fails its first n accepts as a process out of
// descriptors does.
type failingListener struct {
	net.Listener
	n atomic.Int32
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestChannelAcceptsAfterFailures: an accept that fails (out of
// descriptors) is tried again; the script's connection still starts its
// cycle.
func TestChannelAcceptsAfterFailures(t *testing.T) {
	c, err := Open(Config{Script: []byte("// script\n"), TempDir: t.TempDir(), listen: func(network, address string) (net.Listener, error) {
		ln, err := net.Listen(network, address)
		if err != nil {
			return nil, err
		}
		fl := &failingListener{Listener: ln}
		fl.n.Store(3)
		return fl, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s := dialScript(t, c, "")
	cy := next(t, c)
	cy.Ack(1)
	if got := s.read(); got != "ack 1" {
		t.Errorf("script read %q, want ack 1", got)
	}
}

// TestChannelRefusesASecondStart: a start while a cycle runs (the init
// script applied twice to one build) is refused at once, saying why; the
// running cycle goes on, and the next start after it ended is a cycle.
func TestChannelRefusesASecondStart(t *testing.T) {
	c := open(t)
	first := dialScript(t, c, "")
	cy := next(t, c)
	cy.Ack(1)
	if got := first.read(); got != "ack 1" {
		t.Fatalf("first script read %q, want ack 1", got)
	}
	second := dialScript(t, c, "")
	if got := second.read(); !strings.HasPrefix(got, "refused ") || !strings.Contains(got, "applied twice") {
		t.Errorf("second start answered %q, want refused: applied twice", got)
	}
	first.send("finish ok")
	if res, err := cy.Result(context.Background()); res != OK || err != nil {
		t.Fatalf("first cycle's Result = %v, %v; want ok", res, err)
	}
	cy.Finish(1, true)
	third := dialScript(t, c, "")
	cy = next(t, c)
	cy.Ack(2)
	if got := third.read(); got != "ack 2" {
		t.Errorf("the next cycle's script read %q, want ack 2", got)
	}
	// A script whose connection broke starts its next cycle at once,
	// before Result has read the end of the last: that start waits for
	// it and is not refused.
	third.nc.Close()
	fourth := dialScript(t, c, "")
	if res, err := cy.Result(context.Background()); res != Lost || err != nil {
		t.Fatalf("Result after the script left = %v, %v; want lost", res, err)
	}
	cy4 := next(t, c)
	cy.Finish(2, false)
	cy4.Ack(3)
	if got := fourth.read(); got != "ack 3" {
		t.Errorf("the start after a broken connection read %q, want ack 3", got)
	}
}

// TestChannelCloseEndsCycle: closing the channel while a cycle waits for
// its finish ends the script's connection and Result with Lost (or ctx).
func TestChannelCloseEndsCycle(t *testing.T) {
	c := open(t)
	s := dialScript(t, c, "")
	cy := next(t, c)
	cy.Ack(1)
	s.read()
	got := make(chan Result, 1)
	go func() {
		r, _ := cy.Result(context.Background())
		got <- r
	}()
	c.Close()
	select {
	case r := <-got:
		if r != Lost {
			t.Errorf("Result after Close = %v, want lost", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Result did not return after Close")
	}
	if l := s.read(); l != "EOF" {
		t.Errorf("script read %q after Close, want EOF", l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Cycle{nc: s.nc, br: bufio.NewReader(s.nc), done: func() {}}).Result(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Result with an ended context = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Dir(c.file)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("channel directory left: %v", err)
	}
}
