//go:build unix

package boundedfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadTokenRefusesSharedFilesAndPipes: a token file its group or others
// may read is NotPrivate, with the mode found and the chmod that mends it;
// a named pipe is Unreadable at once, never waited on for a writer.
func TestReadTokenRefusesSharedFilesAndPipes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("file-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o640); err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, "open to its group", open, NotPrivate)
	if _, err := ReadToken(open, 16, 64); err == nil || err.Error() != open+" has mode 0640, open to its group or others; chmod 600 "+open {
		t.Errorf("ReadToken(open) = %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, "a named pipe", fifo, Unreadable)
}

// TestReadTokenRefusesAnotherUsersFile: a token file of mode 0600 that
// belongs to another user, reached directly or through a symlink, is
// NotPrivate: its owner could read or choose the token. Only root can read
// another user's 0600 file, so the test runs as root.
func TestReadTokenRefusesAnotherUsersFile(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root reads a file of mode 0600 that another user owns")
	}
	dir := t.TempDir()
	theirs := filepath.Join(dir, "theirs")
	if err := os.WriteFile(theirs, []byte("file-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(theirs, link); err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, "another user's file", theirs, NotPrivate)
	checkRefusal(t, "a symlink to another user's file", link, NotPrivate)
	if _, err := ReadToken(theirs, 16, 64); err == nil || !strings.Contains(err.Error(), "belongs to uid 4242") {
		t.Errorf("ReadToken(theirs) = %v, want it to name the owner", err)
	}
	mine := filepath.Join(dir, "mine")
	if err := os.WriteFile(mine, []byte("file-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadToken(mine, 16, 64); err != nil || tok != "file-token-0123456789" {
		t.Errorf("ReadToken(mine) = %q, %v", tok, err)
	}
}
