//go:build unix

package safebuild

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// logProject makes dir/.buildguard/logs/ holding one build log of data and
// returns the log's path.
func logProject(t *testing.T, dir string, data []byte) string {
	t.Helper()
	logs := LogDir(dir)
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(logs, "20260101T000000000Z-ok.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadLogThroughSwappedLogs: while logs/ is swapped for a symlink to a
// folder outside the project, again and again, no read of the log serves
// the outside file (docs/decisions.md#D23); nor does the open of each
// name with openat and O_NOFOLLOW that stands in for openat2 where the
// kernel lacks it.
func TestReadLogThroughSwappedLogs(t *testing.T) {
	t.Parallel()
	t.Run("ReadLog", func(t *testing.T) {
		t.Parallel()
		swapLogsWhileReading(t, func(path string) (string, error) {
			part, err := ReadLog(path, 0)
			return part.Text, err
		})
	})
	t.Run("openat", func(t *testing.T) {
		t.Parallel()
		swapLogsWhileReading(t, func(path string) (string, error) {
			f, err := openLogWith(filepath.Dir(filepath.Dir(filepath.Dir(path))), filepath.Base(path), openAt)
			if err != nil {
				return "", fmt.Errorf("%w: %w", ErrNotALog, err)
			}
			defer f.Close()
			data, err := io.ReadAll(f)
			return string(data), err
		})
	})
}

// swapLogsWhileReading reads a project's log with read 20,000 times while
// its logs folder is swapped for a symlink to a folder outside holding a
// file of the same name, and fails when a read serves that file.
func swapLogsWhileReading(t *testing.T, read func(path string) (string, error)) {
	project := t.TempDir()
	path := logProject(t, project, []byte("the build's own log\n"))
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, filepath.Base(path)), []byte("SECRET outside the project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Dir(path)
	real, link := logs+".real", logs+".link"
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		defer func() { swapped <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Each rename is atomic: logs is the real folder or the link.
			for _, mv := range [][2]string{{logs, real}, {link, logs}, {logs, link}, {real, logs}} {
				if err := os.Rename(mv[0], mv[1]); err != nil {
					t.Errorf("swapping: %v", err)
					return
				}
			}
			n++
		}
	}()
	served, refused := 0, 0
	var failure error
	for i := 0; i < 20000 && failure == nil; i++ {
		text, err := read(path)
		switch {
		case err == nil && strings.Contains(text, "SECRET"):
			failure = fmt.Errorf("read %d served the file outside the project: %q", i, text)
		case err == nil:
			served++
		case errors.Is(err, ErrNotALog):
			refused++
		default:
			failure = fmt.Errorf("ReadLog: %w", err)
		}
	}
	close(stop)
	n := <-swapped
	if failure != nil {
		t.Fatal(failure)
	}
	t.Logf("%d reads served the log, %d refused, over %d swaps", served, refused, n)
	if refused == 0 || n == 0 {
		t.Errorf("no read met the swapped folder (%d refused, %d swaps): the test proves nothing", refused, n)
	}
}

// TestReadLogRefusesHardLink: a log name in logs/ that is a second hard
// link of any file of the user (or one whose log gained a second link) is
// not read (docs/decisions.md#D23).
func TestReadLogRefusesHardLink(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	path := logProject(t, project, []byte("the build's own log\n"))
	if _, err := ReadLog(path, 0); err != nil {
		t.Fatalf("ReadLog of a log with one link: %v", err)
	}
	secret := filepath.Join(project, "secret.txt") // a hard link must stay on one file system
	if err := os.WriteFile(secret, []byte("SECRET of the user\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(filepath.Dir(path), "20260101T000000001Z-linked.log")
	if err := os.Link(secret, linked); err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(project, "second-name-of-the-log")
	if err := os.Link(path, second); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{linked, path} {
		if part, err := ReadLog(p, 0); !errors.Is(err, ErrNotALog) || !strings.Contains(err.Error(), "hard link") {
			t.Errorf("ReadLog(%s) = %q, %v; want %v naming the hard link", p, part.Text, err, ErrNotALog)
		}
	}
}

// TestReadLogParts: a log read part by part, each part's JSON text at most
// MaxLogRead bytes, gives back the whole log, whatever its bytes (NULs,
// characters of several bytes cut by a part's end, bytes that are not
// UTF-8), and an offset past the end is refused.
func TestReadLogParts(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for b.Len() < 3*MaxLogRead {
		b.WriteString("line € <é> \"q\"\t")
		b.Write([]byte{0, 0, 0, 0xff, '\n'})
	}
	b.Write(bytes.Repeat([]byte{0}, MaxLogRead))
	b.WriteString("the end €")
	path := logProject(t, t.TempDir(), b.Bytes())
	var got strings.Builder
	parts := 0
	for offset := int64(0); ; parts++ {
		part, err := ReadLog(path, offset)
		if err != nil {
			t.Fatalf("ReadLog(%d): %v", offset, err)
		}
		enc, _ := json.Marshal(part.Text)
		if len(enc)-2 > MaxLogRead || part.Offset != offset || part.Next <= offset && part.Next != part.Size || part.Size != int64(b.Len()) {
			t.Fatalf("part at %d: %d bytes encoded, %+v", offset, len(enc), LogPart{Offset: part.Offset, Next: part.Next, Size: part.Size})
		}
		got.WriteString(part.Text)
		if part.Next == part.Size {
			break
		}
		offset = part.Next
	}
	if want := strings.ToValidUTF8(b.String(), "\uFFFD"); got.String() != want {
		t.Errorf("the %d parts give %d bytes, not the log's %d", parts, got.Len(), len(want))
	}
	if parts < 9 {
		t.Errorf("%d parts: a part holds more than MaxLogRead bytes of JSON", parts)
	}
	if _, err := ReadLog(path, int64(b.Len())+1); !errors.Is(err, ErrLogOffset) {
		t.Errorf("ReadLog past the end: %v, want %v", err, ErrLogOffset)
	}
}

// TestReadLogOfAFIFOProjectIsRefusedAtOnce: a log path whose project part is
// a named pipe (a URI any client can send) is refused, not waited on until
// something writes to the pipe.
func TestReadLogOfAFIFOProjectIsRefusedAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "project")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadLog(filepath.Join(LogDir(fifo), "20260101T000000000Z-ok.log"), 0)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("ReadLog of a log beneath a named pipe succeeded")
		}
	case <-time.After(10 * time.Second):
		// Open the pipe for writing so that the blocked read ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("ReadLog waited on a named pipe where the project should be")
	}
}
