package stdio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/internal/testsupport/lockedbuf"
	"github.com/buildguard/buildguard/mcp"
)

// watchedFile is a pipe's read end that reports when a read began and when
// a read ended because its deadline passed.
type watchedFile struct {
	*os.File
	reading, interrupted chan struct{}
	readOnce, intOnce    sync.Once
}

func (w *watchedFile) Read(p []byte) (int, error) {
	w.readOnce.Do(func() { close(w.reading) })
	n, err := w.File.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.intOnce.Do(func() { close(w.interrupted) })
	}
	return n, err
}

// Cancelling Serve interrupts its read of an input that supports deadlines
// (a pipe here), so nothing stays blocked on stdin, and input written later
// is left for the input's owner.
func TestServeCancelInterruptsTheRead(t *testing.T) {
	t.Parallel()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	in := &watchedFile{File: inR, reading: make(chan struct{}), interrupted: make(chan struct{})}
	srv := mcp.NewServer(mcp.Config{Caller: &mcptest.FakeCaller{}, Version: "test", Logger: mcptest.TestLogger(&lockedbuf.Buffer{})})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, in, io.Discard) }()
	within := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal(what)
		}
	}
	within(in.reading, "Serve did not read its input")
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10 s of the cancellation")
	}
	within(in.interrupted, "the read of the input was not interrupted")

	// The deadline is cleared once the reader stopped; what comes next is
	// the owner's.
	const later = "later\n"
	if _, err := io.WriteString(inW, later); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, len(later))
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := io.ReadFull(inR, buf)
			if errors.Is(err, os.ErrDeadlineExceeded) && n == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // until the reader cleared its deadline
				continue
			}
			got <- fmt.Sprintf("%q %v", buf[:n], err)
			return
		}
	}()
	select {
	case g := <-got:
		if want := fmt.Sprintf("%q <nil>", later); g != want {
			t.Errorf("reading the input after Serve: %s, want %s", g, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the input written after Serve returned could not be read within 10 s: the server consumed it or left its deadline set")
	}
}
