package mcp_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/buildguard/buildguard/internal/boundedfile"
	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/service/tools"
)

// process is a Process for Serve in tests: the announcement into announce,
// stopped by stop.
func process(announce *bytes.Buffer, stop ...os.Signal) mcp.Process {
	return mcp.Process{Stdin: strings.NewReader(""), Stdout: new(bytes.Buffer), Announce: announce,
		Name: "test", Log: hclog.NewNullLogger(), Stop: stop, Version: "test"}
}

// TestServeEndsWithAStructuredRefusal: a refused token file or URL file
// ends Serve at Refused, naming the file, with the *boundedfile.Refusal that says
// why, before anything listens (so a taken port is never found taken):
// nothing is announced and the URL file's path is untouched. A port taken ends it at
// NotListening. Serve's words name no flag: its front words the ending
// (docs/decisions.md#D14, docs/decisions.md#D23).
func TestServeEndsWithAStructuredRefusal(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("file-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// The refusals are asked to listen on a taken port: refused before
	// they listen, they never find it taken.
	busy := taken.Addr().String()
	cases := []struct {
		name    string
		http    mcp.HTTPLife
		stage   mcp.Stage
		file    mcp.StartFile
		problem boundedfile.Problem
	}{
		{"a malformed token", mcp.HTTPLife{Listen: busy, TokenFile: short, URLFile: filepath.Join(dir, "url")}, mcp.Refused, mcp.TokenFile, boundedfile.Malformed},
		{"no token file", mcp.HTTPLife{Listen: busy, TokenFile: filepath.Join(dir, "none")}, mcp.Refused, mcp.TokenFile, boundedfile.Unreadable},
		{"a URL file that is a directory", mcp.HTTPLife{Listen: busy, TokenFile: token, URLFile: dir}, mcp.Refused, mcp.URLFile, boundedfile.NotOwnable},
		{"a taken port", mcp.HTTPLife{Listen: busy, URLFile: filepath.Join(dir, "url")}, mcp.NotListening, 0, 0},
	}
	for _, tc := range cases {
		var announce bytes.Buffer
		end := mcp.Serve(mcp.Life{Tools: tools.Deps{Base: dir}, HTTP: tc.http}, process(&announce))
		var refused *boundedfile.Refusal
		switch {
		case end.Stage != tc.stage || end.File != tc.file || end.Signal != nil:
			t.Errorf("%s: ended %+v, want stage %d, file %d", tc.name, end, tc.stage, tc.file)
		case tc.problem != 0 && (!errors.As(end.Err, &refused) || refused.Problem != tc.problem):
			t.Errorf("%s: ended with %v, want an *boundedfile.Refusal with problem %d", tc.name, end.Err, tc.problem)
		case end.Err == nil || strings.Contains(end.Err.Error(), "--"):
			t.Errorf("%s: ended with %v, want an error that names no flag", tc.name, end.Err)
		case announce.Len() != 0:
			t.Errorf("%s: announced %q before a refusal", tc.name, announce.String())
		}
		if _, err := os.Lstat(filepath.Join(dir, "url")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the URL file was written: %v", tc.name, err)
		}
	}
}

// TestServeStdioEndsAtInputEnd: the stdio form serves until its input
// ends, then ends as Served, with no error and no signal.
func TestServeStdioEndsAtInputEnd(t *testing.T) {
	end := mcp.Serve(mcp.Life{Tools: tools.Deps{Base: t.TempDir()}}, process(new(bytes.Buffer), syscall.SIGINT))
	if end != (mcp.Ending{Stage: mcp.Served}) {
		t.Errorf("ended %+v, want Served", end)
	}
}
