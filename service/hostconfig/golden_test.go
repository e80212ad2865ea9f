package hostconfig

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the .out files of testdata/golden")

const (
	goldenBinary = "/opt/buildguard/bin/buildguard"
	goldenDir    = "/home/dev/shop"
)

// TestGolden edits every .in file of testdata/golden/HOST.txtar for its
// host and compares the result with the .out file (a refusal is written as
// "refused: …"); running the edit again on the result changes no byte, and
// the result keeps every other setting (edit checks that itself).
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, h := range All() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "golden", h.Name+".txtar")
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			e := NewEntry(h, goldenBinary, goldenDir)
			outs := map[string]int{}
			for i, f := range ar.Files {
				outs[f.Name] = i
			}
			var files []txtar.File
			for _, f := range ar.Files {
				name, ok := strings.CutSuffix(f.Name, ".in")
				if !ok {
					continue
				}
				in := f.Data
				if strings.HasSuffix(name, "no-newline") || name == "compact" {
					in = bytes.TrimSuffix(in, []byte("\n"))
				}
				got, _, err := edit(h, in, e)
				if err != nil {
					got = []byte("refused: " + err.Error() + "\n")
				} else if again, _, err := edit(h, got, e); err != nil || !bytes.Equal(again, got) {
					t.Errorf("%s: a second run changed the file or failed (%v):\n%s", name, err, again)
				}
				if !bytes.HasSuffix(got, []byte("\n")) {
					got = append(got, '\n') // as txtar keeps it
				}
				files = append(files, f, txtar.File{Name: name + ".out", Data: got})
				if *update {
					continue
				}
				i, ok := outs[name+".out"]
				if !ok {
					t.Errorf("%s: no %s.out in %s; run go test -update", name, name, path)
					continue
				}
				if want := ar.Files[i].Data; !bytes.Equal(got, want) {
					t.Errorf("%s:\ngot:\n%s\nwant:\n%s", name, got, want)
				}
			}
			if *update {
				ar.Files = files
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// A config nested a million levels deep is refused before the parser,
// which recurses per level, can overflow the stack.
func TestEditJSONRefusesDeepNesting(t *testing.T) {
	t.Parallel()
	h, _ := Lookup("claude")
	e := NewEntry(h, goldenBinary, goldenDir)
	deep := bytes.Repeat([]byte("["), 1<<20-1)
	if _, _, err := edit(h, deep, e); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "deeper than 100 levels") {
		t.Errorf("1 MiB of [ = %v, want a syntax refusal", err)
	}
	ok := []byte(`{"mcpServers": {}, "s": "` + strings.Repeat("[", 200) + `", "c": 1 /* ` + strings.Repeat("{", 200) + ` */}`)
	if _, _, err := edit(h, ok, e); err != nil {
		t.Errorf("brackets in a string and a comment: %v", err)
	}
	edge := append(bytes.Repeat([]byte(`{"a":`), maxDepth-1), []byte("{}"+strings.Repeat("}", maxDepth-1))...)
	if _, _, err := edit(h, edge, e); err != nil {
		t.Errorf("%d levels: %v", maxDepth, err)
	}
}
