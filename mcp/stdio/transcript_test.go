package stdio_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/buildguard/buildguard/mcp"
	"github.com/buildguard/buildguard/mcp/mcptest"
)

var update = flag.Bool("update", false, "rewrite the expected output of the testdata/*.txtar transcripts")

// TestTranscripts feeds the "in" file of each testdata/*.txtar to a server
// (fake caller) as stdin, closes it, and compares stdout with the "out" file
// byte for byte. The log (warn level) must stay empty unless a "logs" file
// lists lines it must contain. Requests other than a verification
// batch are answered in input order, so the transcripts are deterministic.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
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
			in := section(t, ar, "in")
			var stdout, logs bytes.Buffer
			srv := mcp.NewServer(mcp.Config{Caller: &mcptest.FakeCaller{}, Version: "test", Logger: mcptest.TestLogger(&logs), DrainTimeout: 5 * time.Second})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := srv.ServeStdio(ctx, bytes.NewReader(in), &stdout); err != nil {
				t.Fatalf("Serve: %v", err)
			}
			checkLogs(t, ar, logs.String())
			mcptest.AssertOnlyJSONRPC(t, stdout.Bytes())
			if *update {
				setSection(ar, "out", stdout.Bytes())
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(section(t, ar, "out")), stdout.String()); diff != "" {
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

func section(t *testing.T, ar *txtar.Archive, name string) []byte {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	if name == "out" && *update {
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
