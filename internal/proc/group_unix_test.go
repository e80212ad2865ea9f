//go:build unix

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// groupEnv switches the test binary into the leader of TestGroupMembers's
// process group: it starts a member, a process that leaves the group and a
// child that exits at once, which it never collects (a zombie), writes their
// pids to the directory named by the variable, and sleeps.
const groupEnv = "PROC_TEST_GROUP_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(groupEnv); dir != "" {
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
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// GroupMembers lists the running members of a process group, not a zombie
// member, and not a process that left the group with setsid.
func TestGroupMembers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	t.Parallel()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), groupEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	// pidOf waits (bounded) until the file name holds a pid.
	pidOf := func(name string) int {
		for {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was not written", name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		cmd.Wait()
		syscall.Kill(pidOf("left"), syscall.SIGKILL)
	})
	zombie := pidOf("zombie")
	for {
		if s, _ := State(zombie); s == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the exited child did not stay a zombie")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, err := GroupMembers(pgid)
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
		if _, err := GroupMembers(os.Getpid()); err != nil {
			b.Fatal(err)
		}
	}
}
