package buildguard

import (
	"os"
	"testing"
)

// warmStart runs once per Run: it must not leave the pidfd it opens behind.
func TestWarmStartLeavesNoDescriptor(t *testing.T) {
	open := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(fds)
	}
	before := open()
	for range 3 {
		warmStart()
	}
	if after := open(); after != before {
		t.Errorf("open descriptors went from %d to %d", before, after)
	}
}
