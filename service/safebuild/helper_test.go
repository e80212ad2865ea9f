//go:build unix

package safebuild

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/reexec"
)

func TestMain(m *testing.M) {
	reexec.Main(m, func(_ string, args []string) int { return fakeBuild(args) })
}

// fakeBuild is a build command with scripted behaviour, run as the test
// binary re-executed in the project directory.
func fakeBuild(args []string) int {
	switch args[0] {
	case "compile": // compile DIR CLASS=TEXT...: writes DIR/CLASS.class files, prints a line each
		for _, kv := range args[2:] {
			class, text, _ := strings.Cut(kv, "=")
			path := filepath.Join(args[1], strings.ReplaceAll(class, ".", "/")+".class")
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 4
			}
			fmt.Printf("compiled %s\n", class)
		}
		return 0
	case "rewrite": // rewrite PATH TEXT: rewrites PATH keeping its size and modification time
		fi, err := os.Stat(args[1])
		if err != nil || int64(len(args[2])) != fi.Size() {
			fmt.Fprintln(os.Stderr, "rewrite needs an existing file of the same size", err)
			return 4
		}
		if err := os.WriteFile(args[1], []byte(args[2]), 0o644); err != nil {
			return 4
		}
		if err := os.Chtimes(args[1], fi.ModTime(), fi.ModTime()); err != nil {
			return 4
		}
		fmt.Println("rewrote", args[1])
		return 0
	case "fail": // fail CODE: an error line on stderr, then exit CODE
		n, _ := strconv.Atoi(args[1])
		fmt.Println("> Task :b:compileJava")
		fmt.Fprintln(os.Stderr, "B.java:3: error: cannot find symbol missingSymbol")
		return n
	case "errors": // errors N: N distinct javac errors and a warning on stderr, then exit 1
		n, _ := strconv.Atoi(args[1])
		var b bytes.Buffer
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "B.java:%d: error: cannot find symbol s%d\n", i, i)
		}
		b.WriteString("B.java:1: warning: [deprecation] old\n")
		os.Stderr.Write(b.Bytes())
		return 1
	case "hang": // hang PIDFILE [ignore]: starts a grandchild, records both pids, prints, waits
		gc := exec.Command("sleep", "300")
		if err := gc.Start(); err != nil {
			return 4
		}
		if len(args) > 2 && args[2] == "ignore" {
			signal.Ignore(syscall.SIGTERM)
		}
		writeAtomic(args[1], fmt.Sprintf("%d %d", os.Getpid(), gc.Process.Pid))
		fmt.Println("compiling forever")
		time.Sleep(300 * time.Second)
		return 0
	case "flood": // flood BYTES: lines of 100 bytes, numbered, up to BYTES
		n, _ := strconv.Atoi(args[1])
		line := strings.Repeat("x", 88)
		var b bytes.Buffer
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%010d %s\n", i, line)
		}
		os.Stdout.Write(b.Bytes())
		return 0
	case "lines": // lines N: N lines, the last one long
		n, _ := strconv.Atoi(args[1])
		for i := 1; i < n; i++ {
			fmt.Printf("line %d\n", i)
		}
		fmt.Printf("last %s\n", strings.Repeat("é", 300))
		return 0
	case "straggler": // straggler PIDFILE: leaves a grandchild in its group and exits 0
		gc := exec.Command("sleep", "300")
		if err := gc.Start(); err != nil {
			return 4
		}
		writeAtomic(args[1], strconv.Itoa(gc.Process.Pid))
		fmt.Println("done, but a helper keeps running")
		return 0
	case "stdin": // stdin: reports what reading stdin gives
		b, err := os.ReadFile("/dev/stdin")
		fmt.Printf("stdin %d bytes err=%v\n", len(b), err)
		return 0
	}
	return 99
}

func writeAtomic(path, text string) {
	os.WriteFile(path+".tmp", []byte(text), 0o644)
	os.Rename(path+".tmp", path)
}

// fixture is a project directory with a watched output directory and a fake
// agent that watches it: on an accepted BUILD ok it captures every class
// file there, as the agent's watcher would have reported them while held.
type fixture struct {
	dir     string // project directory
	classes string // watched output directory
	agent   *fakeagent.Server
	builder *Builder
}

func newFixture(t testing.TB, opts ...fakeagent.Option) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, classes: filepath.Join(dir, "build", "classes")}
	if err := os.MkdirAll(f.classes, 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var srv *fakeagent.Server
	opts = append([]fakeagent.Option{
		fakeagent.WithHeartbeat(-1),
		fakeagent.WithDoctor(fakeagent.Evidence{WatchedDirectories: []string{f.classes}}),
		fakeagent.WithAcceptance(func(context.Context, string) fakeagent.Outcome {
			mu.Lock()
			s := srv
			mu.Unlock()
			filepath.WalkDir(f.classes, func(path string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(path, ".class") {
					return nil
				}
				rel, _ := filepath.Rel(f.classes, path)
				data, _ := os.ReadFile(path)
				s.AddPendingClass(strings.ReplaceAll(strings.TrimSuffix(rel, ".class"), "/", "."), path, data)
				return nil
			})
			return fakeagent.AcceptSuccess
		}),
	}, opts...)
	s := fakeagent.NewServer(t, opts...)
	mu.Lock()
	srv = s
	mu.Unlock()
	f.agent = s
	f.builder = New(Config{
		Grace:            500 * time.Millisecond,
		VerifyWait:       5 * time.Second,
		ProgressInterval: 50 * time.Millisecond,
		Env:              append(os.Environ(), reexec.Env("build")),
	})
	return f
}

// request runs the fake build with args in the fixture's project.
func (f *fixture) request(t testing.TB, args ...string) Request {
	return Request{
		Dir:      f.dir,
		Build:    Build{Name: "fake", Command: append([]string{reexec.Binary(t)}, args...), Timeout: time.Minute},
		Endpoint: agentproto.Endpoint{PortFile: f.agent.PortFile(), Base: f.dir},
	}
}
