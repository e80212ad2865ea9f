//go:build unix

package proc

import (
	"os"
	"os/exec"
	"runtime"
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
