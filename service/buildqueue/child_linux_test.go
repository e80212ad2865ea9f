package buildqueue

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	osproc "github.com/buildguard/buildguard/internal/proc"
)

// childAttr starts a build's command as the runners of the core do: the
// leader of its own process group, or of its own session, killed by the
// kernel when its parent dies.
func childAttr(session bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: !session, Setsid: session, Pdeathsig: syscall.SIGKILL}
}

func newGroup() error { return syscall.Setpgid(0, 0) }

// TestOutlivingProcessesHoldTheTurn: a build's supervisor is SIGKILLed
// while its command runs; the kernel ends the command, not the grandchild
// it started, which keeps writing. The next build of the project does not
// start while that grandchild runs: it says it waits for it, ends it after
// the grace period and says so. Both for a command that leads a process
// group (exec) and one that leads a session whose job left the group
// (pty).
func TestOutlivingProcessesHoldTheTurn(t *testing.T) {
	for _, session := range []bool{false, true} {
		t.Run(map[bool]string{false: "group", true: "session"}[session], func(t *testing.T) {
			dir := project(t)
			out := filepath.Join(t.TempDir(), "written")
			env := []string{"BUILDQUEUE_CHILD=" + out}
			if session {
				env = append(env, "BUILDQUEUE_SESSION=1")
			}
			holder := startHelper(t, dir, env...)
			holder.expect(t, "admitted")
			gpid, err := strconv.Atoi(strings.TrimPrefix(holder.expect(t, "grandchild "), "grandchild "))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(gpid, syscall.SIGKILL) })
			grows(t, out) // it writes: it has found its group
			if p, ok := osproc.Lookup(gpid); !ok || (session && p.PGID == p.Session) {
				t.Fatalf("the grandchild is %+v, %v; want it running (under a session, in a group of its own)", p, ok)
			}
			if err := holder.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = holder.cmd.Wait()
			// The fault: the grandchild outlives its build's supervisor and
			// writes after it died.
			if osproc.Gone(gpid) {
				t.Fatal("the grandchild died with the supervisor: nothing to test")
			}
			grows(t, out)

			var mu sync.Mutex
			var said []string
			turn, err := newQueue().Wait(context.Background(), Request{Project: dir, Name: "next", Grace: 200 * time.Millisecond,
				Report: func(s Status) { mu.Lock(); said = append(said, s.String()); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			defer turn.Release(nil)
			if !osproc.Gone(gpid) {
				t.Fatal("the next build started while the grandchild of the killed one still runs")
			}
			found, ended := turn.Outlived()
			if found < 1 || ended < 1 {
				t.Errorf("Outlived() = %d, %d; want the grandchild found and ended", found, ended)
			}
			if note := turn.OutlivedNote(); !strings.Contains(note, "ended") || !strings.Contains(note, "outlived its supervisor") {
				t.Errorf("OutlivedNote() = %q", note)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(said) == 0 || !strings.Contains(said[0], "of an earlier build of the project that outlived its supervisor") {
				t.Errorf("the waiting build said %q", said)
			}
			if got := records(t, dir); len(got) != 0 {
				t.Errorf("records left: %v", got)
			}
		})
	}
}

// grows waits (at most 10 s) until out grows.
func grows(t *testing.T, out string) {
	t.Helper()
	size := func() int64 {
		fi, err := os.Stat(out)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size()
	for end := time.Now().Add(10 * time.Second); size() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s did not grow within 10s", out)
		}
	}
}

// records returns the records of builds' processes in dir's queue that
// name processes: a blank record names none.
func records(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, StateDir, QueueDir, groupPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	procs := filepath.Join(dir, StateDir, QueueDir, procsName)
	if data, err := os.ReadFile(procs); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		m = append(m, procs)
	}
	return m
}

// TestReleasedBuildLeavesNoRecord: a build that ends with its Release
// takes its record with it, so the next build looks at no process; so
// does a nested build's.
func TestReleasedBuildLeavesNoRecord(t *testing.T) {
	dir := project(t)
	q := newQueue()
	turn, err := q.Wait(context.Background(), Request{Project: dir, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(turn *Turn, want int) {
		t.Helper()
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = childAttr(false)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		turn.Started(cmd.Process.Pid, false)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if got := records(t, dir); len(got) != want {
			t.Fatalf("records while the build runs: %v, want %d", got, want)
		}
	}
	run(turn, 1)
	t.Setenv(TurnEnv, strings.TrimPrefix(turn.Env()[0], TurnEnv+"="))
	nested, err := q.Wait(context.Background(), Request{Project: dir, Name: "nested"})
	if err != nil {
		t.Fatal(err)
	}
	run(nested, 2)
	nested.Release(nil)
	if got := records(t, dir); len(got) != 1 {
		t.Fatalf("records after the nested build's Release: %v", got)
	}
	turn.Release(nil)
	if got := records(t, dir); len(got) != 0 {
		t.Fatalf("records after Release: %v", got)
	}
}

// TestForeignRecordsEndNothing: a record that does not name an earlier
// build's processes of this boot (another boot's, a leader id now another
// process's, garbage, a symlink) ends nothing and is removed; the build
// starts at once.
func TestForeignRecordsEndNothing(t *testing.T) {
	dir := project(t)
	bystander := exec.Command("sleep", "60")
	bystander.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bystander.Process.Kill(); _ = bystander.Wait() }()
	pid := bystander.Process.Pid
	p, ok := osproc.Lookup(pid)
	if !ok {
		t.Fatal("no bystander")
	}
	qdir := filepath.Join(dir, StateDir, QueueDir)
	if err := os.MkdirAll(qdir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name string, g group) {
		data, _ := json.Marshal(g)
		if err := os.WriteFile(filepath.Join(qdir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	name := groupPrefix + strconv.Itoa(pid)
	for _, c := range []struct {
		what string
		make func()
	}{
		{"another boot's", func() { write(name, group{PGID: pid, Start: p.Start, Boot: "another boot", NS: pidNS()}) }},
		{"a leader id now another process's", func() { write(name, group{PGID: pid, Start: p.Start - 1, Boot: bootID(), NS: pidNS()}) }},
		{"another boot's, as the turn's record", func() { write(procsName, group{PGID: pid, Start: p.Start, Boot: "another boot", NS: pidNS()}) }},
		{"a record under another group's name", func() { write(groupPrefix+"1", group{PGID: pid, Start: p.Start, Boot: bootID(), NS: pidNS()}) }},
		{"another pid namespace's", func() { write(name, group{PGID: pid, Start: p.Start, Boot: bootID(), NS: "pid:[1]"}) }},
		{"a group whose members are in another session than its leader was", func() {
			write(name, group{PGID: pid, In: p.Session + 100000, Start: p.Start, Boot: bootID(), NS: pidNS()})
		}},
		{"garbage", func() { _ = os.WriteFile(filepath.Join(qdir, name), []byte("{"), 0o600) }},
		{"a symlink", func() {
			write("real", group{PGID: pid, Start: p.Start, Boot: bootID(), NS: pidNS()})
			_ = os.Symlink("real", filepath.Join(qdir, name))
		}},
	} {
		c.make()
		turn, err := newQueue().Wait(context.Background(), Request{Project: dir, Name: "x", Grace: -1})
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		turn.Release(nil)
		if found, _ := turn.Outlived(); found != 0 || osproc.Gone(pid) {
			t.Fatalf("%s: found %d, the bystander gone: %v", c.what, found, osproc.Gone(pid))
		}
		_ = os.Remove(filepath.Join(qdir, name))
		_ = os.Remove(filepath.Join(qdir, "real"))
		if got := records(t, dir); len(got) != 0 {
			t.Fatalf("%s: records left: %v", c.what, got)
		}
	}
}

// BenchmarkRecordProcesses is what recording a build's processes adds to
// a build (docs/safe-build.md#4): Wait, Started for a running command and
// Release, next to Wait and Release alone, alternating in each iteration.
// It reports the median of the per-iteration differences (record-ms).
func BenchmarkRecordProcesses(b *testing.B) {
	dir, q := project(b), newQueue()
	ctx := context.Background()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = childAttr(false)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	turn := func(record bool) time.Duration {
		start := time.Now()
		t, err := q.Wait(ctx, Request{Project: dir, Name: "x"})
		if err != nil {
			b.Fatal(err)
		}
		if record {
			t.Started(cmd.Process.Pid, false)
			if t.record == nil {
				b.Fatal("nothing recorded")
			}
		}
		t.Release(nil)
		return time.Since(start)
	}
	var diff []time.Duration
	for b.Loop() {
		diff = append(diff, turn(true)-turn(false))
	}
	b.ReportMetric(median(diff), "record-ms")
}
