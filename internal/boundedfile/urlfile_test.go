package boundedfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestURLFileNeverFollowsALink: a URL file's path that is a symlink — to a
// regular file (another user's link planted in a shared directory, or any
// file when run as root), to a file not there yet, to a directory — is
// refused, and nothing is written or removed: the file it points to keeps
// its content, nothing is created where a dangling link points, and no
// temporary file is left beside it (docs/decisions.md#D23).
func TestURLFileNeverFollowsALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"to a regular file":  victim,
		"relative":           "victim",
		"dangling":           filepath.Join(dir, "not-yet"),
		"to a directory":     dir,
		"to a link to files": filepath.Join(dir, "to a regular file"),
	} {
		link := filepath.Join(dir, name)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"to a regular file", "relative", "dangling", "to a directory", "to a link to files"} {
		link := filepath.Join(dir, name)
		written, err := WriteURLFile(link, "http://127.0.0.1:1/mcp?token=secret")
		var refused *Refusal
		if !errors.As(err, &refused) || refused.Problem != NotOwnable {
			t.Errorf("%s: WriteURLFile = %v, want a NotOwnable refusal", name, err)
		}
		if err := written.Remove(); err != nil {
			t.Errorf("%s: remove: %v", name, err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the link is gone or replaced: %v", name, err)
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Errorf("the file a link points to holds %q (%v), want it untouched", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 {
		t.Errorf("%d entries in the directory, want the victim and the five links only: %v", len(entries), entries)
	}
	if _, err := os.Lstat(filepath.Join(dir, "not-yet")); err == nil {
		t.Error("a file was created where the dangling link points")
	}
}

// TestURLFileRemovesOnlyItsOwnFile: the URL file replaces a regular file
// at its path with one of its own (mode 0600), and on exit removes the file
// it created, and only it: a file or a link someone put at the path since
// is left alone, and so is what that link points to.
func TestURLFileRemovesOnlyItsOwnFile(t *testing.T) {
	t.Parallel()
	const url = "http://127.0.0.1:1/mcp?token=secret"
	dir := t.TempDir()
	path := filepath.Join(dir, "url")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	written, err := WriteURLFile(path, url)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if b, _ := os.ReadFile(path); err != nil || string(b) != url+"\n" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the URL file holds %q with mode %v (%v)", b, fi.Mode(), err)
	}
	if err := written.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the URL file is still there after remove: %v", err)
	}

	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		replace func() error
	}{
		// The link takes the place, and (files being numbered anew)
		// often the inode number, of the file the server created.
		{"a link", func() error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return os.Symlink(victim, path)
		}},
		{"another file", func() error {
			other := filepath.Join(dir, "other")
			if err := os.WriteFile(other, []byte("other\n"), 0o600); err != nil {
				return err
			}
			return os.Rename(other, path)
		}},
	} {
		name, replace := tc.name, tc.replace
		written, err := WriteURLFile(path, url)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := replace(); err != nil {
			t.Fatal(err)
		}
		if err := written.Remove(); err != nil {
			t.Errorf("%s: remove: %v", name, err)
		}
		if _, err := os.Lstat(path); err != nil {
			t.Errorf("%s put at the path was removed: %v", name, err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Errorf("the file the link pointed to holds %q (%v), want it untouched", b, err)
	}
}
