package diagnostics

import (
	"strings"
	"testing"
)

// TestCarriageReturnStartsALine: an error printed after a carriage return
// inside a line (a progress line the terminal overwrites) is read, and so
// is one before it.
func TestCarriageReturnStartsALine(t *testing.T) {
	s := parse("/p", "<=> 40% EXECUTING [2s]\r/p/B.java:3: error: cannot find symbol\n/p/C.java:4: error: first\r> :b:compileJava\r\n")
	if len(s.Diagnostics) != 2 || s.Diagnostics[0].File != "B.java" || s.Diagnostics[0].Line != 3 || s.Diagnostics[1].File != "C.java" {
		t.Fatalf("got %v", s.Diagnostics)
	}
}

// TestPathsSharingTheirStart: files whose paths share their first
// MaxMessageBytes bytes are different files: each is listed, each name is
// cut with its end kept, and the same file printed twice is merged.
func TestPathsSharingTheirStart(t *testing.T) {
	dir := "/p/" + strings.Repeat("d", 2*MaxMessageBytes)
	out := dir + "/A.java:1: error: same message\n" + dir + "/B.java:1: error: same message\n" + dir + "/A.java:1: error: same message\n"
	s := parse("/elsewhere", out)
	if len(s.Diagnostics) != 2 || s.Errors != 2 {
		t.Fatalf("%d listed, %d errors: %v", len(s.Diagnostics), s.Errors, s.Diagnostics)
	}
	for i, want := range []string{"/A.java", "/B.java"} {
		f := s.Diagnostics[i].File
		if len(f) > MaxMessageBytes || !strings.HasSuffix(f, want) || !strings.HasPrefix(f, "/p/ddd") {
			t.Fatalf("file %d is %q (%d bytes)", i, f, len(f))
		}
	}
}
