package cli

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPArgsOnePass: the options of both forms of `buildguard mcp`, stdio
// and HTTP, are read in one pass, in any order, into one result
// (docs/mcp-server.md#1.1, docs/decisions.md#D14).
func TestMCPArgsOnePass(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	if err := os.Mkdir(filepath.Join(wd, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	project, _ := filepath.EvalSymlinks(filepath.Join(wd, "p"))
	o, err := parseMCPArgs([]string{"--url-file", "u.txt", "--project-dir", "p", "--http", "localhost:0", "--port-file", "agent.port", "--token-file", "t.txt"}, wd)
	if err != nil {
		t.Fatal(err)
	}
	want := mcpHTTPOptions{addr: "localhost:0", listen: "127.0.0.1:0", urlHost: "localhost", tokenFile: "t.txt", urlFile: "u.txt"}
	if o.http != want || o.Base != project || !o.ProjectSelected || o.StartupPortFile != filepath.Join(project, "agent.port") {
		t.Errorf("parsed %+v", o)
	}
	if o, err := parseMCPArgs([]string{"--port-file", "agent.port"}, wd); err != nil || o.http != (mcpHTTPOptions{}) {
		t.Errorf("stdio form: %+v, %v", o, err)
	}
}

// TestMCPArgsSpellings: `--name=value`, `-name value` and `-name=value` are
// `--name value` (docs/decisions.md#D1); a value that starts with `--` is
// still a missing one, as the reference reads it.
func TestMCPArgsSpellings(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	for _, args := range [][]string{
		{"--project-dir=.", "--http=127.0.0.1:0"},
		{"-project-dir", ".", "-http", "127.0.0.1:0"},
		{"-project-dir=.", "-http=127.0.0.1:0"},
	} {
		o, err := parseMCPArgs(args, wd)
		if err != nil || !o.ProjectSelected || o.http.listen != "127.0.0.1:0" {
			t.Errorf("%q: %+v, %v", args, o, err)
		}
	}
	for _, args := range [][]string{{"--port-file=--x"}, {"-port-file", "--project-dir", "."}} {
		if _, err := parseMCPArgs(args, wd); err == nil || err.Error() != "Duplicate option or missing value: --port-file" {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestMCPArgsFirstErrorWins: the arguments are read from left to right, the
// HTTP options among the others, and the first one that is wrong is the
// one reported; the options are checked together after that.
func TestMCPArgsFirstErrorWins(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	for _, c := range []struct {
		args []string
		want error
	}{
		{[]string{"--verbose", "--http", "0.0.0.0:1"}, errMCPUnknownOption},
		{[]string{"--http", "0.0.0.0:1", "--verbose"}, errMCPUnknownOption},
		{[]string{"--url-file", " ", "--http", "127.0.0.1:0"}, errMCPBadPath},
		{[]string{"--http", "127.0.0.1:0", "--url-file", " "}, errMCPBadPath},
		{[]string{"--http", "0.0.0.0:1", "--project-dir", "missing"}, errMCPHTTPAddr},
		{[]string{"--http", ""}, errMCPHTTPAddr},
		{[]string{"--token-file", "t", "--project-dir", "missing"}, errMCPHTTPOnly},
		{[]string{"--", "--project-dir", "."}, errMCPUnknownOption},
		{[]string{"--project-dir", ".", "--"}, errMCPUnknownOption},
		{[]string{"-h", "--project-dir", "."}, errMCPUnknownOption},
		{[]string{"--help=x"}, errMCPUnknownOption},
	} {
		if _, err := parseMCPArgs(c.args, wd); !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %v", c.args, err, c.want)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}} {
		if _, err := parseMCPArgs(args, wd); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%q: %v, want help", args, err)
		}
	}
}

// TestMCPArgsAnswerWithin: `--answer-within DURATION`, in either form,
// sets how long a safe build call waits before it answers running
// (docs/safe-build.md#14); without it, zero: the whole build. A value that
// is not a duration from 1s to 10m is a usage error that says so.
func TestMCPArgsAnswerWithin(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	for args, want := range map[string]time.Duration{
		"":                    0,
		"--answer-within 50s": 50 * time.Second,
		"--answer-within=1s":  time.Second,
		"-answer-within 10m":  10 * time.Minute,
		"--http 127.0.0.1:0 --answer-within 1m30s": 90 * time.Second,
	} {
		o, err := parseMCPArgs(strings.Fields(args), wd)
		if err != nil || o.AnswerWithin != want {
			t.Errorf("%q: AnswerWithin %v, %v; want %v", args, o.AnswerWithin, err, want)
		}
	}
	for _, args := range []string{"--answer-within 999ms", "--answer-within 11m", "--answer-within soon", "--answer-within 50", "--answer-within -1s"} {
		if _, err := parseMCPArgs(strings.Fields(args), wd); !errors.Is(err, errMCPAnswerWithin) {
			t.Errorf("%q: %v, want %v", args, err, errMCPAnswerWithin)
		}
	}
	for _, args := range []string{"--answer-within=--x", "--answer-within 1s --answer-within 2s"} {
		if _, err := parseMCPArgs(strings.Fields(args), wd); err == nil || err.Error() != "Duplicate option or missing value: --answer-within" {
			t.Errorf("%q: %v", args, err)
		}
	}
}
