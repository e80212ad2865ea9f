package boundedfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadTokenRefusalsAreStructured: each refusal of a token file is an
// *Refusal whose Problem says why — a file that is not there or a directory
// is Unreadable, one that holds no token of the form asked is Malformed
// (TestReadTokenRefusesSharedFilesAndPipes has the rest) — and its text
// names the file but no front's setting: the fronts word it
// (docs/decisions.md#D14).
func TestReadTokenRefusalsAreStructured(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  file-token-0123456789\n", 0o600)
	cases := map[string]struct {
		path string
		want Problem
	}{
		"missing":       {filepath.Join(dir, "missing"), Unreadable},
		"a directory":   {dir, Unreadable},
		"too short":     {write("short", "short\n", 0o600), Malformed},
		"with a space":  {write("space", "file-token 0123456789\n", 0o600), Malformed},
		"not printable": {write("ctl", "file-token-\x7f0123456789\n", 0o600), Malformed},
		"too long":      {write("long", strings.Repeat("t", 65), 0o600), Malformed},
	}
	for name, tc := range cases {
		checkRefusal(t, name, tc.path, tc.want)
	}
	if tok, err := ReadToken(good, 16, 64); err != nil || tok != "file-token-0123456789" {
		t.Errorf("ReadToken(good) = %q, %v", tok, err)
	}
}

// checkRefusal checks that ReadToken refuses path with problem want, in
// words that name the file and no front's flag.
func checkRefusal(t *testing.T, name, path string, want Problem) {
	t.Helper()
	tok, err := ReadToken(path, 16, 64)
	var refused *Refusal
	if !errors.As(err, &refused) || refused.Problem != want {
		t.Errorf("%s: ReadToken = %q, %v; want a refusal with problem %d", name, tok, err, want)
		return
	}
	if !strings.Contains(err.Error(), filepath.Base(path)) || strings.Contains(err.Error(), "--") {
		t.Errorf("%s: %q should name the file and no front's flag", name, err)
	}
}
