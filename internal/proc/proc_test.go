//go:build unix

package proc

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

func TestStateAndGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	if s, ok := State(os.Getpid()); !ok || s != 'R' && s != 'S' {
		t.Errorf("State(self) = %c, %v; want running or sleeping", s, ok)
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	cmd.Wait()
	if !Gone(pid) {
		t.Errorf("Gone(%d) = false after the process was collected", pid)
	}
	if Gone(os.Getpid()) {
		t.Error("Gone(self) = true")
	}
}

// TestMembersOfAGroupAndSession: Members finds a process by its group and
// by its session, with the start time Lookup gives, and BootID names the
// boot.
func TestMembersOfAGroupAndSession(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	p, ok := Lookup(pid)
	if !ok || p.PGID != pid || p.Session != pid || p.Start == 0 {
		t.Fatalf("Lookup(%d) = %+v, %v; want the leader of its own group and session", pid, p, ok)
	}
	for _, c := range []struct{ pgid, sid int }{{pid, 0}, {-1, pid}} {
		got, err := Members(c.pgid, c.sid)
		if err != nil || len(got) != 1 || got[0] != p {
			t.Errorf("Members(%d, %d) = %+v, %v; want [%+v]", c.pgid, c.sid, got, err, p)
		}
	}
	if got, err := Members(-1, 0); err != nil || len(got) != 0 {
		t.Errorf("Members(-1, 0) = %v, %v; want none", got, err)
	}
	if id := BootID(); len(id) < 16 {
		t.Errorf("BootID() = %q", id)
	}
}
