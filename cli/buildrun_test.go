package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// hostile is build output made to reach a terminal: BEL, backspace, a
// title (OSC), a colour (CSI), the one-character CSI U+009B, a C1 control
// and a lone escape.
const hostile = "a\x07b\x08c\x1b]0;title\x07d\x1b[31me\u009b2Jf\u0085g\x1b"

// noControls fails unless out holds no control character but the newlines
// and the screen's own "\r\x1b[2K", and nothing left of an escape sequence.
func noControls(t *testing.T, out string) {
	t.Helper()
	plain := strings.ReplaceAll(out, "\r\x1b[2K", "")
	for _, r := range plain {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			t.Fatalf("control character %U in %q", r, out)
		}
	}
	if strings.Contains(plain, "title") || strings.Contains(plain, "[31m") || strings.Contains(plain, "2J") {
		t.Fatalf("an escape sequence's remnant in %q", out)
	}
}

// TestBuildScreenShowsNoControlCharacters: the progress, queue and count
// lines and the diagnostics show what the build printed without its
// control characters and escape sequences, plain and on a terminal; the
// count line counts every error and warning found, not only those listed.
func TestBuildScreenShowsNoControlCharacters(t *testing.T) {
	t.Parallel()
	var plain bytes.Buffer
	s := &buildScreen{w: &plain, start: time.Now(), width: func() int { return 400 }}
	s.progress(3, hostile)
	s.queue(hostile)
	s.result([]byte(`{"build":"b","outcome":"failed","diagnostics":[{"severity":"error","file":"F` + jsonEscaped(hostile) + `.java","line":1,"message":"` + jsonEscaped(hostile) + `"}],` +
		`"diagnosticsOmitted":100000,"errors":100000,"warnings":1,"failedTasks":["` + jsonEscaped(hostile) + `"],"failedModules":["m"]}`))
	out := plain.String()
	noControls(t, out)
	for _, want := range []string{"buildguard: build: 3 lines: a?b?cdef?g\n", "buildguard: queue: a?b?cdef?g\n",
		`buildguard: build "b" failed: 100000 errors, 1 warning; failed tasks: a?b?cdef?g; failed modules: m` + "\n",
		"  Fa?b?cdef?gjava:1: error: a?b?cdef?g\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}

	var tty bytes.Buffer
	s = &buildScreen{w: &tty, tty: true, start: time.Now(), width: func() int { return 400 }}
	s.progress(3, hostile)
	s.queue(hostile)
	noControls(t, tty.String())
}

// jsonEscaped is s as the inside of a JSON string.
func jsonEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' {
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
