//go:build unix

package boundedfile

import (
	"os"
	"path/filepath"
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
