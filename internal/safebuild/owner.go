package safebuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/buildguard"
)

// OwnerFile is where a project keeps the owner token of its safe builds,
// under StateDir (docs/safe-build.md#4). Every safe build of the project,
// from the MCP server or the CLI, uses this one owner, so a failed build's
// hold is released by the project's next successful build.
const OwnerFile = "owner"

// errOwnerFile means the owner file exists but cannot be used.
var errOwnerFile = errors.New("unusable owner file")

// projectOwner returns the project's owner token, creating it (a fresh
// UUID, written atomically) on first use, in the checked state directory
// (EnsureStateDir).
func projectOwner(dir string) (string, error) {
	state, err := EnsureStateDir(dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(state, OwnerFile)
	owner, err := readOwner(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return owner, err
	}
	owner, err = buildguard.NewOwner("")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(state, ".owner-*")
	if err != nil {
		return "", fmt.Errorf("writing the owner file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(owner + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("writing the owner file: %w", werr)
	}
	// A link, not a rename: when another build created the file meanwhile,
	// its owner wins and is read back. A link never replaces a symlink.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("writing the owner file: %w", err)
	}
	return readOwner(path)
}

// readOwner reads an owner file: a regular file of this user, not a
// symlink, holding one owner token.
func readOwner(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if err := checkOwn(path, fi, false); err != nil {
		return "", fmt.Errorf("%w: %w", errOwnerFile, err)
	}
	f, err := openNoFollow(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errOwnerFile, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > 1024 {
		return "", fmt.Errorf("%w: %s is not a small regular file; remove it (a build that failed under its owner then stays held until the application restarts)", errOwnerFile, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1025))
	if err != nil {
		return "", fmt.Errorf("%w: %w", errOwnerFile, err)
	}
	owner := string(bytes.TrimSpace(data))
	if !agentproto.ValidToken(owner) {
		return "", fmt.Errorf("%w: %s does not hold an owner token (1-64 ASCII letters, digits, _ or -); remove it to start with a fresh one", errOwnerFile, path)
	}
	return owner, nil
}
