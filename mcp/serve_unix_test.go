//go:build unix

package mcp_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/tools"
)

// TestServeHTTPEndsOnItsStopSignal: the HTTP form announces its URL, with
// the file's token, in one line after the line's name, writes the same URL
// into the URL file, serves until one of its stop signals, then ends as
// Served with that signal and removes the URL file.
func TestServeHTTPEndsOnItsStopSignal(t *testing.T) {
	dir := t.TempDir()
	token, urlFile := filepath.Join(dir, "token"), filepath.Join(dir, "url")
	if err := os.WriteFile(token, []byte("file-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	p := mcp.Process{Announce: w, Name: "test", Log: hclog.NewNullLogger(), Stop: []os.Signal{syscall.SIGUSR1}}
	ended := make(chan mcp.Ending, 1)
	go func() {
		ended <- mcp.Serve(mcp.Life{Tools: tools.Deps{Base: dir}, HTTP: mcp.HTTPLife{Listen: "127.0.0.1:0", URLHost: "127.0.0.1", TokenFile: token, URLFile: urlFile}}, p)
		w.Close()
	}()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r)
	}()
	var line string
	select {
	case line = <-lines:
	case end := <-ended:
		t.Fatalf("Serve ended before it announced: %+v", end)
	case <-time.After(30 * time.Second):
		t.Fatal("no announcement within 30 s")
	}
	url, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "test: serving MCP over streamable HTTP at ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp?token=file-token-0123456789") {
		t.Errorf("announced %q", line)
	}
	if b, err := os.ReadFile(urlFile); err != nil || string(b) != url+"\n" {
		t.Errorf("the URL file holds %q (%v), want %q", b, err, url+"\n")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case end := <-ended:
		if end != (mcp.Ending{Stage: mcp.Served, Signal: syscall.SIGUSR1}) {
			t.Errorf("ended %+v, want Served on SIGUSR1", end)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not end within 30 s of its stop signal")
	}
	if _, err := os.Lstat(urlFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the URL file is still there: %v", err)
	}
}
