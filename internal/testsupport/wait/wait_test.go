//go:build unix

package wait

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestUntil: a condition that comes true ends the wait; one that never
// does ends it after the bound, reporting false.
func TestUntil(t *testing.T) {
	t.Parallel()
	n := 0
	if !Until(time.Minute, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("Until returned before the third look or not at all: %d looks", n)
	}
	start := time.Now()
	if Until(50*time.Millisecond, func() bool { return false }) {
		t.Error("Until reported a condition that never held")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("Until gave up after %s, before its bound", d)
	}
}

// TestGoneAndPIDFile: a pid file written whole is read back; a process
// that runs is reported until it ends.
func TestGoneAndPIDFile(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	path := filepath.Join(t.TempDir(), "pids")
	if _, err := PIDFileWithin(path, 20*time.Millisecond); err == nil {
		t.Error("a missing pid file was read")
	}
	go func() { // written whole, as a build does
		os.WriteFile(path+".tmp", []byte(" 1 \n"+strconv.Itoa(cmd.Process.Pid)), 0o644)
		os.Rename(path+".tmp", path)
	}()
	if got := PIDFile(t, 10*time.Second, path); !slices.Equal(got, []int{1, cmd.Process.Pid}) {
		t.Errorf("PIDFile = %v", got)
	}
	if left := GoneWithin(20*time.Millisecond, cmd.Process.Pid); !slices.Equal(left, []int{cmd.Process.Pid}) {
		t.Errorf("GoneWithin = %v for a running process", left)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if left := GoneWithin(10*time.Second, cmd.Process.Pid); left != nil {
		t.Errorf("GoneWithin = %v after the process ended", left)
	}
}
