//go:build unix

package safebuild

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/buildguard/buildguard/service/diagnostics"
)

// TestRunFailedCarriesDiagnostics: the compiler's error in the output is in
// the result's diagnostics, and a result encodes empty lists, never null.
func TestRunFailedCarriesDiagnostics(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.builder.Run(context.Background(), f.request(t, "fail", "3"))
	if res.Outcome != OutcomeFailed {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	if len(res.Diagnostics) != 1 {
		t.Fatalf("diagnostics %+v", res.Diagnostics)
	}
	d := res.Diagnostics[0]
	if d.Severity != diagnostics.SeverityError || d.File != "B.java" || d.Line != 3 || d.Message != "cannot find symbol missingSymbol" {
		t.Errorf("diagnostic %+v", d)
	}
	ok := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "B=fixed"))
	data, err := ok.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"diagnostics":[]`, `"diagnosticsOmitted":0`, `"failedTasks":[]`, `"failedModules":[]`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %s", data, want)
		}
	}
}

// TestRunCountsEveryDiagnostic: a result counts every error and warning
// of the output, not only those it lists.
func TestRunCountsEveryDiagnostic(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.builder.Run(context.Background(), f.request(t, "errors", "2000"))
	if res.Outcome != OutcomeFailed {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	if res.Errors != 2000 || res.Warnings != 1 || len(res.Diagnostics) != diagnostics.MaxDiagnostics || res.DiagnosticsOmitted != 2001-diagnostics.MaxDiagnostics {
		t.Fatalf("errors %d, warnings %d, listed %d, omitted %d", res.Errors, res.Warnings, len(res.Diagnostics), res.DiagnosticsOmitted)
	}
	data, err := res.JSON()
	if err != nil || !strings.Contains(string(data), `"errors":2000,"warnings":1,`) {
		t.Fatalf("%.300s… (%v)", data, err)
	}
}

// TestReadLog: a build's own log reads back; anything else that is not a
// log of a project's .buildguard/logs/, or is reached through a symlink, is
// refused.
func TestReadLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.builder.Run(context.Background(), f.request(t, "fail", "3"))
	log := *res.Output.LogFile
	part, err := ReadLog(log, 0)
	if err != nil || !strings.Contains(part.Text, "missingSymbol") || part.Next != part.Size {
		t.Fatalf("ReadLog(%s) = %+v, %v", log, part, err)
	}

	other := t.TempDir()
	secret := filepath.Join(other, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o644)
	logs := LogDir(f.dir)
	name := filepath.Base(log)

	linked := filepath.Join(logs, "20260101T000000000Z-linked.log")
	if err := os.Symlink(secret, linked); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(logs, "20260101T000000000Z-fifo.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A project whose logs directory is a symlink to somewhere else.
	evil := t.TempDir()
	os.MkdirAll(filepath.Join(evil, StateDir), 0o755)
	os.MkdirAll(filepath.Join(other, "logs"), 0o755)
	os.WriteFile(filepath.Join(other, "logs", name), []byte("elsewhere"), 0o644)
	os.Symlink(filepath.Join(other, "logs"), filepath.Join(evil, StateDir, "logs"))

	for _, tc := range []struct {
		path string
		want error
	}{
		{secret, ErrNotALog},
		{"relative/" + StateDir + "/logs/" + name, ErrNotALog},
		{logs + "/../logs/" + name, ErrNotALog},
		{filepath.Join(f.dir, StateDir, "owner"), ErrNotALog},
		{filepath.Join(logs, "notes.txt"), ErrNotALog},
		{linked, ErrNotALog},
		{fifo, ErrNotALog},
		{filepath.Join(logs, "20260101T000000000Z-missing.log"), ErrNotALog},
		{filepath.Join(evil, StateDir, "logs", name), ErrNotALog},
	} {
		if part, err := ReadLog(tc.path, 0); !errors.Is(err, tc.want) {
			t.Errorf("ReadLog(%s) = %q, %v; want %v", tc.path, part.Text, err, tc.want)
		}
	}
}
