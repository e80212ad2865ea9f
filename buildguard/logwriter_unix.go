//go:build unix

package buildguard

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// LogWriter returns the writer for the wrapper's own log lines on w. It is w
// itself unless w is a terminal. For a terminal, it ends each line with
// "\r\n" whenever the terminal does no output processing — the raw mode a
// PTYRunner sets while the build runs — so that a line logged meanwhile (a
// forwarded signal, the end of the grace period) starts at the left margin
// instead of leaving the next lines in a staircase. Outside raw mode the
// terminal translates "\n" itself and the bytes pass unchanged.
func LogWriter(w io.Writer) io.Writer {
	f, ok := terminalFile(w)
	if !ok {
		return w
	}
	return rawSafeWriter{f}
}

type rawSafeWriter struct{ f *os.File }

func (w rawSafeWriter) Write(p []byte) (int, error) {
	t, err := unix.IoctlGetTermios(int(w.f.Fd()), ioctlGetTermios)
	if err != nil || t.Oflag&unix.OPOST != 0 || !bytes.Contains(p, []byte("\n")) {
		return w.f.Write(p)
	}
	q := bytes.ReplaceAll(bytes.ReplaceAll(p, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
	if _, err := w.f.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}
