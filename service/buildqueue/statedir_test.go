package buildqueue

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestStateDirIgnoresItself: the state directory the queue or the run
// lock creates holds a .gitignore of "*"; one the user made is given none
// (docs/safe-build.md#9).
func TestStateDirIgnoresItself(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		create func(t *testing.T, dir string)
		users  bool // the user made .buildguard before
	}{
		{"queue", func(t *testing.T, dir string) {
			if _, err := queueDir(dir); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"run lock file", func(t *testing.T, dir string) {
			held, err := (&runLock{root: dir, viaFile: true}).take()
			if err != nil {
				t.Fatal(err)
			}
			held.Close()
		}, false},
		{"queue in the user's folder", func(t *testing.T, dir string) {
			if _, err := queueDir(dir); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.users {
				os.Mkdir(filepath.Join(dir, StateDir), 0o755)
			}
			tc.create(t, dir)
			data, err := os.ReadFile(filepath.Join(dir, StateDir, ".gitignore"))
			switch {
			case tc.users && !errors.Is(err, os.ErrNotExist):
				t.Errorf("the user's .buildguard was given a .gitignore: %q, %v", data, err)
			case !tc.users && (err != nil || string(data) != "*\n"):
				t.Errorf(".buildguard/.gitignore %q, %v; want \"*\\n\"", data, err)
			}
		})
	}
}
