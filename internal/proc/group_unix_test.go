//go:build unix

package proc_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/reexec"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

func TestMain(m *testing.M) {
	reexec.Main(m, func(_ string, args []string) int { return groupLeader(args[0]) })
}

// groupLeader leads TestGroupMembers's process group, run as the test
// binary re-executed: it starts a member, a process that leaves the group
// and a child that exits at once, which it never collects (a zombie),
// writes their pids to dir, and sleeps.
func groupLeader(dir string) int {
	start := func(name string, setsid bool, argv ...string) {
		c := exec.Command(argv[0], argv[1:]...)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
		if err := c.Start(); err != nil {
			os.Exit(3)
		}
		os.WriteFile(filepath.Join(dir, name+".tmp"), []byte(strconv.Itoa(c.Process.Pid)), 0o644)
		os.Rename(filepath.Join(dir, name+".tmp"), filepath.Join(dir, name))
	}
	start("member", false, "sleep", "300")
	start("left", true, "sleep", "300")
	start("zombie", false, "true")
	time.Sleep(300 * time.Second)
	return 0
}

// GroupMembers lists the running members of a process group, not a zombie
// member, and not a process that left the group with setsid.
func TestGroupMembers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	t.Parallel()
	dir := t.TempDir()
	argv, env := reexec.Command(t, "group-leader", dir)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	pidOf := func(name string) int { return wait.PIDFile(t, 10*time.Second, filepath.Join(dir, name))[0] }
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		cmd.Wait()
		syscall.Kill(pidOf("left"), syscall.SIGKILL)
	})
	zombie := pidOf("zombie")
	wait.For(t, 10*time.Second, "the exited child stays a zombie", func() bool {
		s, _ := proc.State(zombie)
		return s == 'Z'
	})
	got, err := proc.GroupMembers(pgid)
	if err != nil {
		t.Fatal(err)
	}
	sort.Ints(got)
	want := []int{pgid, pidOf("member")}
	sort.Ints(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GroupMembers(%d) = %v, want %v (leader and member; not the zombie %d, not the setsid'ed %d)", pgid, got, want, zombie, pidOf("left"))
	}
}

// BenchmarkGroupMembers measures one look at a process group's members, the
// cost a build pays once after its command exited when nothing of it is
// left, and per look while the wrapper waits for what is.
func BenchmarkGroupMembers(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("no /proc here")
	}
	for b.Loop() {
		if _, err := proc.GroupMembers(os.Getpid()); err != nil {
			b.Fatal(err)
		}
	}
}
