//go:build unix

package boundedfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/boundedfile"
)

func TestReadFileRegularAndSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, link} {
		if b, err := boundedfile.ReadFile(p, 2); err != nil || string(b) != "{}" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
	if _, err := boundedfile.ReadFile(filepath.Join(dir, "missing"), 2); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ path, says string }{
		"fifo":      {fifo, "named pipe"},
		"fifo link": {fifoLink, "named pipe"},
		"dev zero":  {"/dev/zero", "character device"},
		"directory": {dir, "directory"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			done := make(chan error, 2)
			go func() {
				_, err := boundedfile.ReadFile(c.path, boundedfile.ConfigLimit)
				done <- err
				_, err = boundedfile.SHA256(c.path, boundedfile.ClassFileLimit)
				done <- err
			}()
			for range 2 {
				select {
				case err := <-done:
					if !errors.Is(err, boundedfile.ErrNotRegular) || !strings.Contains(err.Error(), c.says) {
						t.Errorf("error %v, want ErrNotRegular saying %q", err, c.says)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("reading blocked for 10 s")
				}
			}
		})
	}
}

func TestRefusesTooLarge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "big.class")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: the size is what counts, not the blocks on disk.
	if err := f.Truncate(boundedfile.ClassFileLimit + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := boundedfile.SHA256(path, boundedfile.ClassFileLimit); !errors.Is(err, boundedfile.ErrTooLarge) || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("SHA256 of 64 MiB + 1 = %v, want ErrTooLarge naming 64 MiB", err)
	}
	if _, err := boundedfile.ReadFile(path, boundedfile.ConfigLimit); !errors.Is(err, boundedfile.ErrTooLarge) {
		t.Errorf("ReadFile = %v, want ErrTooLarge", err)
	}
	if err := os.Truncate(path, boundedfile.ConfigLimit); err != nil {
		t.Fatal(err)
	}
	if b, err := boundedfile.ReadFile(path, boundedfile.ConfigLimit); err != nil || int64(len(b)) != boundedfile.ConfigLimit {
		t.Errorf("ReadFile at exactly the limit = %d bytes, %v", len(b), err)
	}
}

func TestSHA256(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "A.class")
	if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got, err := boundedfile.SHA256(path, 3); err != nil || got != want {
		t.Errorf("SHA256 = %s, %v; want %s", got, err, want)
	}
	if _, err := boundedfile.SHA256(path, 2); !errors.Is(err, boundedfile.ErrTooLarge) {
		t.Errorf("SHA256 over the limit = %v", err)
	}
}
