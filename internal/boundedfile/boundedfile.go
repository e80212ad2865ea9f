// Package boundedfile reads the files buildguard takes as input — the host
// configs init edits, the class files verify hashes — with a bound, as
// docs/decisions.md#D13 requires: regular files only (a symlink to one is
// followed), at most a size cap, and never a wait on a named pipe or a
// device. It owns reading; what the bytes mean belongs to the caller. Two
// files of the HTTP server have rules of their own (docs/decisions.md#D14,
// docs/decisions.md#D23): the token file, which only its owner may read
// (ReadToken), and the URL file, written and removed only as a file of
// its own, never through a link (WriteURLFile). Their refusals are
// structured (*Refusal), for each front to word.
package boundedfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The caps of docs/decisions.md#D13.
const (
	// ConfigLimit caps a host config file (.mcp.json, settings.json, config.toml, …).
	ConfigLimit int64 = 1 << 20
	// ClassFileLimit caps a class file given to verify or verify-batch.
	ClassFileLimit int64 = 64 << 20
)

// ErrNotRegular marks a path that names something other than a regular file
// (a directory, a named pipe, a device, a socket), or a symlink to one.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge marks a regular file larger than the cap it was read with.
var ErrTooLarge = errors.New("larger than the limit")

// Open opens path for reading and returns it with its size, or an error
// wrapping ErrNotRegular or ErrTooLarge (or the open error, such as
// fs.ErrNotExist). Opening never blocks: a named pipe is opened without
// waiting for a writer and then refused.
func Open(path string, limit int64) (*os.File, int64, error) {
	f, err := open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is %s, %w", path, Describe(fi.Mode()), ErrNotRegular)
	}
	if fi.Size() > limit {
		f.Close()
		return nil, 0, tooLarge(path, limit)
	}
	return f, fi.Size(), nil
}

// ReadFile returns the contents of the regular file at path, at most limit
// bytes; a file that grows past limit while it is read is refused too.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, _, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

// SHA256 returns the lower-case hexadecimal SHA-256 of the regular file at
// path, read up to limit bytes: the form VERIFY compares with the bytes the
// agent captured.
func SHA256(path string, limit int64) (string, error) {
	f, _, err := Open(path, limit)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit+1))
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	if n > limit {
		return "", tooLarge(path, limit)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s is %w of %s", path, ErrTooLarge, size(limit))
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Describe names what a file of mode m that is not a regular file is, as
// the refusals of this package word it ("a named pipe (FIFO)").
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (mode " + m.String() + ")"
}
