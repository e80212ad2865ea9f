//go:build unix

package cycle

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/reexec"
)

func TestMain(m *testing.M) { reexec.Main(m, childMain) }

// childMain: "channel TEMPDIR" opens a channel in TEMPDIR, prints its
// directory and waits (at most 60 s) to be killed.
func childMain(name string, args []string) int {
	if name != "channel" {
		return reexec.Unknown(name)
	}
	c, err := Open(Config{Script: []byte("// script\n"), TempDir: args[0]})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println(c.dir)
	time.Sleep(60 * time.Second)
	return 0
}

// TestChannelRemovesStaleDirs: the channel directory (and secret) of a run
// killed with SIGKILL is removed by the next run's Open; a live run's, a
// link and another user's files are left alone (docs/decisions.md#D20).
func TestChannelRemovesStaleDirs(t *testing.T) {
	tmp := t.TempDir()
	argv, env := reexec.Command(t, "channel", tmp)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(filepath.Base(line), dirPrefix) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child printed %q, %v; want its channel directory", line, err)
	}
	killed := strings.TrimSpace(line)
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(killed, channelName)); err != nil {
		t.Fatalf("the killed run left no channel file to clean up: %v", err)
	}

	live, err := Open(Config{Script: []byte("// script\n"), TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	// A link named like a channel directory, to a dead one elsewhere.
	elsewhere := t.TempDir()
	deadTarget := filepath.Join(elsewhere, dirPrefix+"target")
	if err := os.Mkdir(deadTarget, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(deadTarget, lockName), nil, 0o600)
	os.WriteFile(filepath.Join(deadTarget, channelName), []byte("x"), 0o600)
	if err := os.Symlink(deadTarget, filepath.Join(tmp, dirPrefix+"link")); err != nil {
		t.Fatal(err)
	}

	next, err := Open(Config{Script: []byte("// script\n"), TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if _, err := os.Lstat(killed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's channel directory is still there: %v", err)
	}
	if _, err := os.Stat(live.file); err != nil {
		t.Errorf("the live run's channel file was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(deadTarget, channelName)); err != nil {
		t.Errorf("a file behind a link was removed: %v", err)
	}
}
