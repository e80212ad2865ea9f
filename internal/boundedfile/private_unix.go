//go:build unix

package boundedfile

import (
	"fmt"
	"os"
)

// privateToOwner refuses a secret file that its group or others may read
// or write, as ssh refuses such a key.
func privateToOwner(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("has mode %04o, open to its group or others", perm)
	}
	return nil
}
