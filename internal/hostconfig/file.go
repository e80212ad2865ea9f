package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"

	"github.com/buildguard/buildguard/internal/boundedfile"
)

// Change is the planned edit of one host's file.
type Change struct {
	// Host is the host whose file it is.
	Host Host
	// Path is the file as the host names it; it may be a symlink.
	Path string
	// Target is the file that is written: Path, or where its symlink points.
	Target string
	// Exists reports whether the file exists now.
	Exists bool
	// Old and New are the contents before and after; equal when nothing changes.
	Old, New []byte
	// Mode is the file's permission bits, kept by Write.
	Mode fs.FileMode
}

// Changed reports whether the change writes anything.
func (c Change) Changed() bool { return !c.Exists || !bytes.Equal(c.Old, c.New) }

// Plan reads host h's file and returns the change that puts e into it. A
// file that must stay as it is (docs/decisions.md#D13) is a *Refusal;
// nothing is written either way.
func Plan(h Host, env Env, e Entry) (Change, error) {
	mode := fs.FileMode(0o644)
	if h.Scope == User {
		mode = 0o600
	}
	c, err := PlanEdit(h.File(env), mode, h.Path()+" entry", func(old []byte) ([]byte, error) { return edit(h, old, e) })
	c.Host = h
	return c, err
}

// PlanEdit reads the file at path with the bound of docs/decisions.md#D13
// (nil when it does not exist) and returns the change that apply makes of
// it; a new file gets mode. A refusal of apply, a file that is not a
// regular one, a dangling symlink or a read-only file that would change
// are a *Refusal. what names the part of the file the change writes.
func PlanEdit(path string, mode fs.FileMode, what string, apply func(old []byte) ([]byte, error)) (Change, error) {
	c := Change{Path: path, Target: path, Mode: mode}
	refuse := func(err error, fix string) (Change, error) {
		return Change{}, &Refusal{Path: path, Err: err, Fix: fix}
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return refuse(fmt.Errorf("is a symlink that does not resolve: %w", err), "Point the link at a file (or remove it), then run init again.")
		}
		c.Target = target
	}
	old, err := boundedfile.ReadFile(c.Target, boundedfile.ConfigLimit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.New, err = apply(nil)
		if err != nil {
			return Change{}, err
		}
		return c, nil
	case errors.Is(err, boundedfile.ErrNotRegular), errors.Is(err, boundedfile.ErrTooLarge):
		return Change{}, &Refusal{Path: path, Err: trimPath(err, c.Target), Fix: "Replace it with a regular file (a symlink to one is fine), then run init again."}
	case err != nil:
		return Change{}, fmt.Errorf("reading %s: %w", path, err)
	}
	c.Exists, c.Old = true, old
	fi, err := os.Stat(c.Target)
	if err != nil {
		return Change{}, err
	}
	c.Mode = fi.Mode().Perm()
	c.New, err = apply(old)
	var fix string
	switch {
	case err == nil:
	case errors.Is(err, ErrInvalidUTF8):
		fix = "Save it as UTF-8, then run init again."
	case errors.Is(err, ErrDuplicateKey):
		fix = "Remove the duplicate so that one value is left, then run init again."
	case errors.Is(err, ErrSyntax), errors.Is(err, ErrNotObject):
		fix = "Fix or move it, then run init again."
	case errors.Is(err, ErrUnsupported):
		fix = "Change it as this says, then run init again."
	default:
		return Change{}, err
	}
	if err != nil {
		return refuse(err, fix)
	}
	if c.Changed() && c.Mode&0o222 == 0 {
		return refuse(ErrReadOnly, fmt.Sprintf("Make it writable (chmod u+w %s) and run init again, or leave it read-only and add the %s yourself.", path, what))
	}
	return c, nil
}

func trimPath(err error, path string) error {
	msg := err.Error()
	if p := path + " is "; len(msg) > len(p) && msg[:len(p)] == p {
		return fmt.Errorf("is %s", msg[len(p):])
	}
	return err
}

// edit applies the host's editor to old and checks the result: it parses,
// our entry holds exactly e, and everything else decodes as before. A
// failed check is a bug, reported as an error; nothing is written.
func edit(h Host, old []byte, e Entry) ([]byte, error) {
	var out []byte
	var err error
	if h.Format == TOML {
		out, err = editTOML(old, h.Container, e)
	} else {
		out, err = editJSON(old, h.Container, e)
	}
	if err != nil {
		return nil, err
	}
	before, err := decode(h.Format, old)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	after, err := decode(h.Format, out)
	if err != nil && h.Format == TOML {
		return nil, fmt.Errorf("%w: with the [%s] table added it would not parse (%v); add the entry yourself", ErrUnsupported, h.Path(), err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the edited %s file does not parse: %v", errEditBroken, h.Name, err)
	}
	if err := sameExceptOurs(before, after, h.Container, e); err != nil {
		return nil, fmt.Errorf("%w: the edit of the %s file: %v", errEditBroken, h.Name, err)
	}
	return out, nil
}

// errEditBroken marks an edit whose result fails the check before the
// write: a bug, never a property of the user's file.
var errEditBroken = errors.New("hostconfig: internal error, nothing was written")

// decode returns the document's data; an empty document is an empty object.
func decode(f Format, b []byte) (map[string]any, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return doc, nil
	}
	if f == TOML {
		return doc, toml.Unmarshal(b, &doc)
	}
	std, err := hujson.Standardize(bytes.Clone(bytes.TrimPrefix(b, bom)))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	return doc, dec.Decode(&doc)
}

// sameExceptOurs checks that after carries e in container.buildguard and
// equals before in everything else.
func sameExceptOurs(before, after map[string]any, container string, e Entry) error {
	servers, _ := after[container].(map[string]any)
	entry, _ := servers[EntryName].(map[string]any)
	if entry == nil {
		return fmt.Errorf("no %s.%s object", container, EntryName)
	}
	owned := e.fields()
	for _, f := range owned {
		if !equalData(normalize(entry[f.key]), normalize(f.value)) {
			return fmt.Errorf("%s is %v, want %v", f.key, entry[f.key], f.value)
		}
	}
	strip(after, container, owned, before)
	strip(before, container, owned, nil)
	if !equalData(before, after) {
		return errors.New("other settings changed")
	}
	return nil
}

// strip removes the owned keys from doc's entry and, when ref (the
// document before) had no entry or servers table, the ones the edit added.
func strip(doc map[string]any, container string, owned []field, ref map[string]any) {
	servers, _ := doc[container].(map[string]any)
	entry, _ := servers[EntryName].(map[string]any)
	if entry == nil {
		return
	}
	for _, f := range owned {
		delete(entry, f.key)
	}
	if ref == nil {
		return
	}
	refServers, hadServers := ref[container].(map[string]any)
	if _, hadEntry := refServers[EntryName]; !hadEntry && len(entry) == 0 {
		delete(servers, EntryName)
	}
	if !hadServers && len(servers) == 0 {
		delete(doc, container)
	}
}

// equalData is reflect.DeepEqual over decoded documents, except that a NaN
// equals a NaN (TOML has nan).
func equalData(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalData(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalData(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	}
	return reflect.DeepEqual(a, b)
}

func normalize(v any) any {
	switch t := v.(type) {
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out
	}
	return v
}

// Write writes the change atomically (a temporary file beside the target,
// renamed over it) with the file's mode; a symlink stays a link and its
// target is replaced. A missing directory is created. An unchanged file is
// not touched.
func (c Change) Write() error {
	if !c.Changed() {
		return nil
	}
	return WriteAtomic(c.Target, c.New, c.Mode)
}

// WriteAtomic writes data to path through a temporary file in the same
// directory renamed over it, so a reader sees the old file or the new one,
// never a part; the file gets mode, and an existing file's owner when
// that can be kept.
func WriteAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("creating a temporary file beside %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if fi, err := os.Stat(path); err == nil {
		keepOwner(tmp, fi)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}
