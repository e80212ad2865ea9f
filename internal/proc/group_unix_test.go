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

// GroupMembers lists the running members of a process group, not a zombie
// member, and not a process that left the group with setsid.
func TestGroupMembers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	t.Parallel()
	dir := t.TempDir()
	// The group's leader starts a sleeper, a process that leaves the group,
	// and then a child that exits at once and stays a zombie: the leader
	// runs only builtins after it, then becomes sleep, which never collects.
	script := `sleep 300 & echo $! > "$1/member"
setsid sleep 300 & echo $! > "$1/left"
sh -c 'exit 0' & echo $! > "$1/zombie"
exec sleep 300`
	cmd := exec.Command("sh", "-c", script, "sh", dir)
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
			t.Fatal("the zombie did not become one")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The leader has become sleep once it runs no shell any more.
	for {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pgid) + "/comm")
		if strings.TrimSpace(string(b)) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader did not exec sleep")
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
