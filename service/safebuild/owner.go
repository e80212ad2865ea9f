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
// UUID, written atomically) on first use, in the project's state directory,
// opened and checked as the logs are (openStateDir): nothing is read or
// written through a symlink.
func projectOwner(dir string) (string, error) {
	state, err := openStateDir(dir)
	if err != nil {
		return "", err
	}
	defer state.Close()
	owner, err := readOwner(state)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return owner, err
	}
	owner, err = buildguard.NewOwner("")
	if err != nil {
		return "", err
	}
	// Linked in, not renamed: when another build created the file
	// meanwhile, its owner wins and is read back.
	if err := state.linkNew(OwnerFile, []byte(owner+"\n")); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("writing the owner file: %w", err)
	}
	return readOwner(state)
}

// readOwner reads the owner file of state: a regular file of this user,
// not a symlink, holding one owner token.
func readOwner(state *stateDir) (string, error) {
	path := filepath.Join(state.path, OwnerFile)
	f, err := state.open(OwnerFile)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil {
			if cerr := checkOwn(path, fi, false); cerr != nil {
				return "", fmt.Errorf("%w: %w", errOwnerFile, cerr)
			}
		}
		if errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("%w: %w", errOwnerFile, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil {
		err = checkOwn(path, fi, false)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", errOwnerFile, err)
	}
	if fi.Size() > 1024 {
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
