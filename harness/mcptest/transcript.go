package mcptest

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// ServeFunc is a server's stdio session: its ServeStdio.
type ServeFunc = func(ctx context.Context, in io.Reader, out io.Writer) error

// RunTranscripts feeds the "in" file of each transcript matching pattern
// (txtar files) as stdin to the session newServer returns, built to log
// into logs, and compares stdout with the "out" file byte for byte, at most
// 30 s a transcript. The log must stay empty unless a "logs" file lists
// lines it must contain. With update it rewrites the "out" files instead.
func RunTranscripts(t *testing.T, pattern string, update bool, newServer func(logs io.Writer) ServeFunc) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in := section(t, ar, "in", update)
			var stdout, logs bytes.Buffer
			serve := newServer(&logs)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := serve(ctx, bytes.NewReader(in), &stdout); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			checkLogs(t, ar, logs.String())
			AssertOnlyJSONRPC(t, stdout.Bytes())
			if update {
				setSection(ar, "out", stdout.Bytes())
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(section(t, ar, "out", update)), stdout.String()); diff != "" {
				t.Errorf("stdout mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// checkLogs: without a "logs" file the session must log nothing at warn
// level; with one, each of its lines must appear in the log.
func checkLogs(t *testing.T, ar *txtar.Archive, logs string) {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name != "logs" {
			continue
		}
		for _, want := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
			if !strings.Contains(logs, want) {
				t.Errorf("log lacks %q; got:\n%s", want, logs)
			}
		}
		return
	}
	if logs != "" {
		t.Errorf("log output at warn level in a normal session:\n%s", logs)
	}
}

func section(t *testing.T, ar *txtar.Archive, name string, update bool) []byte {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	if name == "out" && update {
		return nil
	}
	t.Fatalf("transcript has no %q file", name)
	return nil
}

func setSection(ar *txtar.Archive, name string, data []byte) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = data
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: data})
}
