//go:build unix

package boundedfile

import (
	"fmt"
	"os"
	"syscall"
)

// privateToOwner refuses a secret file that its group or others may read
// or write, or that belongs to another user than the one running this
// process (or root): its owner could read or choose the secret. So ssh
// refuses such a key.
// The error names file and says how to mend it.
func privateToOwner(f *os.File, file string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o, open to its group or others; chmod 600 %s", file, perm, file)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d, not to uid %d that runs buildguard, so its owner can read and change the token; use a file of your own", file, st.Uid, os.Geteuid())
	}
	return nil
}
