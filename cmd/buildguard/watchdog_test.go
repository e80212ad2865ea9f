//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// watchdogArg is buildqueue.WatchdogArg, which a command does not import.
const watchdogArg = "__buildguard-watchdog"

// watchdogsOf returns the running watchdogs that the process supervisor
// started.
func watchdogsOf(supervisor int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		f := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
		if len(f) == 3 && string(f[1]) == watchdogArg && string(f[2]) == strconv.Itoa(supervisor) && !proc.Gone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// termScript is forkScript whose grandchild ignores SIGTERM too.
var termScript = strings.Replace(forkScript, "trap '' HUP", "trap '' HUP TERM", 1)

// TestWatchdogEndsTheBuildOfAKilledSupervisor: the supervisor of a running
// build — `build run` or a stdio `buildguard mcp` — is SIGKILLed; its
// watchdog ends the grandchild the kernel leaves running, with SIGTERM, or
// with SIGKILL after the grace period when it ignores SIGTERM, and exits,
// while no next build of the project is started; it holds no file of the
// project, its queue or its run lock (docs/safe-build.md#4).
func TestWatchdogEndsTheBuildOfAKilledSupervisor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the watchdog runs on Linux (docs/safe-build.md#4)")
	}
	t.Parallel()
	for _, killed := range []string{"build run", "stdio"} {
		for _, script := range []string{"term", "term-ignored"} {
			t.Run(strings.ReplaceAll(killed, " ", "-")+"/"+script, func(t *testing.T) {
				t.Parallel()
				watchdogEnds(t, killed, script)
			})
		}
	}
}

func watchdogEnds(t *testing.T, killed, script string) {
	p := newQueueProject(t)
	cfg := `{"builds": {"victim": {"command": ["sh", "fork.sh"]}}}`
	fork, deadline := forkScript, 15*time.Second
	if script == "term-ignored" {
		fork, deadline = termScript, 15*time.Second+10*time.Second // the grace period first
	}
	for name, data := range map[string]string{".buildguard.json": cfg, "fork.sh": fork} {
		if err := os.WriteFile(filepath.Join(p.dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := make(chan outcome, 1)
	var holder *exec.Cmd
	if killed == "build run" {
		holder = p.callCLI(t, "victim", "victim", out)
	} else {
		var cs *sdkmcp.ClientSession
		cs, holder = p.stdioServer(t)
		callMCP(wait.Context(t, 60*time.Second), cs, "victim", "victim", out)
	}
	gpid, err := strconv.Atoi(strings.TrimSpace(string(wait.File(t, 30*time.Second, filepath.Join(p.dir, "grandchild.pid")))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(gpid, syscall.SIGKILL) })
	var dogs []int
	wait.For(t, 10*time.Second, "the supervisor's watchdog", func() bool { dogs = watchdogsOf(holder.Process.Pid); return len(dogs) == 1 })
	t.Cleanup(func() { _ = syscall.Kill(dogs[0], syscall.SIGKILL) })
	if d, ok := proc.Lookup(dogs[0]); !ok || d.PGID == gpid || d.Session == holder.Process.Pid {
		t.Errorf("the watchdog %+v shares a group or session with the build or its supervisor", d)
	}
	fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(dogs[0]), "fd"))
	for _, fd := range fds {
		if l, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(dogs[0]), "fd", fd.Name())); strings.HasPrefix(l, p.dir) {
			t.Errorf("the watchdog holds %s of the project (fd %s)", l, fd.Name())
		}
	}
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-out
	wait.For(t, deadline, "the watchdog to end the grandchild of the killed supervisor's build", func() bool { return proc.Gone(gpid) })
	wait.For(t, 10*time.Second, "the watchdog to exit", func() bool { return proc.Gone(dogs[0]) })
}

// daemonScript is a build that leaves a process behind in a session of its
// own (as the Gradle daemon does), outside the build's group, and exits 0.
const daemonScript = `
setsid sh -c 'echo $$ > daemon.pid.tmp && mv daemon.pid.tmp daemon.pid; exec sleep 600' </dev/null >/dev/null 2>&1 &
while [ ! -s daemon.pid ]; do sleep 0.01; done
`

// TestWatchdogLeavesNothingAfterANormalBuild: a build that ends normally,
// even one that leaves a daemon of its own behind, leaves no watchdog
// running once its supervisor (`build run`, a stdio `buildguard mcp`) has
// exited, and the watchdog is not one of the build's processes: the build
// is ok (docs/decisions.md#D12), and the daemon lives on.
func TestWatchdogLeavesNothingAfterANormalBuild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the watchdog runs on Linux (docs/safe-build.md#4)")
	}
	t.Parallel()
	for _, front := range []string{"build-run", "stdio"} {
		t.Run(front, func(t *testing.T) {
			t.Parallel()
			p := newQueueProject(t)
			cfg := `{"builds": {"daemon": {"command": ["sh", "daemon.sh"]}}}`
			for name, data := range map[string]string{".buildguard.json": cfg, "daemon.sh": daemonScript} {
				if err := os.WriteFile(filepath.Join(p.dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := make(chan outcome, 1)
			var supervisor *exec.Cmd
			var cs *sdkmcp.ClientSession
			if front == "build-run" {
				supervisor = p.callCLI(t, "daemon", "daemon", out)
			} else {
				cs, supervisor = p.stdioServer(t)
				callMCP(wait.Context(t, 60*time.Second), cs, "daemon", "daemon", out)
			}
			o := <-out
			dpid, _ := strconv.Atoi(strings.TrimSpace(string(wait.File(t, 10*time.Second, filepath.Join(p.dir, "daemon.pid")))))
			t.Cleanup(func() { _ = syscall.Kill(dpid, syscall.SIGKILL) })
			if o.err != nil || o.result["outcome"] != "ok" {
				t.Fatalf("the build: %v %s", o.err, o.raw)
			}
			if cs != nil {
				cs.Close() // ends the server's input, and waits for it to exit
			}
			wait.For(t, 10*time.Second, "no watchdog of the supervisor once it exited", func() bool { return len(watchdogsOf(supervisor.Process.Pid)) == 0 })
			if proc.Gone(dpid) {
				t.Error("the build's daemon was ended with the build")
			}
		})
	}
}
