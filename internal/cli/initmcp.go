package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/buildguard/buildguard/agentproto"
)

const initUsage = "Usage: buildguard init --mcp [--project-dir DIR]"

// errNotObject marks a .mcp.json (or its mcpServers member) that is not a
// JSON object; the file is left as it is.
var errNotObject = errors.New("is not a JSON object")

// runInit handles `buildguard init --mcp [--project-dir DIR]`.
func runInit(args []string, stderr io.Writer) ExitCode {
	var mcp bool
	dir := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--help" || a == "-h":
			fmt.Fprintln(stderr, initUsage)
			return ExitOK
		case a == "--mcp" && !mcp:
			mcp = true
		case a == "--project-dir" && dir == "" && i+1 < len(args):
			i++
			dir = args[i]
		default:
			if v, ok := cutFlag(a, "--project-dir"); ok && dir == "" {
				dir = v
				continue
			}
			fmt.Fprintf(stderr, "buildguard init: unexpected argument %q\n%s\n", a, initUsage)
			return ExitUsage
		}
	}
	if !mcp {
		fmt.Fprintf(stderr, "buildguard init: say what to set up (--mcp)\n%s\n", initUsage)
		return ExitUsage
	}
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		var fi fs.FileInfo
		if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: --project-dir %s must name an existing directory: %v\n", dir, err)
		return ExitUsage
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintf(stderr, "buildguard init: finding this binary's path: %v\n", err)
		return ExitFailure
	}
	path := filepath.Join(abs, ".mcp.json")
	changed, err := writeMCPConfig(path, self, abs)
	switch {
	case errors.Is(err, errNotObject):
		fmt.Fprintf(stderr, "buildguard init: %s %v; it was left unchanged. Fix or move it, then run init again.\n", path, err)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(stderr, "buildguard init: %v; %s was left unchanged\n", err, path)
		return ExitFailure
	case changed:
		fmt.Fprintf(stderr, "buildguard init: wrote mcpServers.buildguard to %s\n", path)
	default:
		fmt.Fprintf(stderr, "buildguard init: %s already has this mcpServers.buildguard entry; nothing changed\n", path)
	}
	return ExitOK
}

func cutFlag(arg, name string) (string, bool) {
	if len(arg) > len(name)+1 && arg[:len(name)+1] == name+"=" {
		return arg[len(name)+1:], true
	}
	return "", false
}

// writeMCPConfig merges the stdio server entry into the .mcp.json at path,
// keeping every other entry and key in its place, and writes atomically. It
// reports whether the file changed.
//
// A path that is a symlink is followed: the file it points to is replaced and
// the link stays. A link that does not resolve is an error, and nothing is
// written.
func writeMCPConfig(path, binary, projectDir string) (bool, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return false, fmt.Errorf("resolving the symlink: %w", err)
		}
		path = target
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	doc := agentproto.Object{}
	if len(bytes.TrimSpace(old)) > 0 {
		if doc, err = agentproto.ParseObject(old); err != nil {
			return false, errNotObject
		}
	}
	servers := agentproto.Object{}
	if raw, ok := doc.Get("mcpServers"); ok {
		if servers, err = agentproto.ParseObject(raw); err != nil {
			return false, fmt.Errorf("its mcpServers member %w", errNotObject)
		}
	}
	entry, err := agentproto.Object{{Key: "command", Value: mustMarshal(binary)}, {Key: "args", Value: mustMarshal([]string{"mcp", "--project-dir", projectDir})}}.MarshalJSON()
	if err != nil {
		return false, err
	}
	if cur, ok := servers.Get("buildguard"); ok && jsonEqual(cur, entry) {
		return false, nil
	}
	serversRaw, err := servers.Set("buildguard", entry).MarshalJSON()
	if err != nil {
		return false, err
	}
	compact, err := doc.Set("mcpServers", serversRaw).MarshalJSON()
	if err != nil {
		return false, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return false, err
	}
	out.WriteByte('\n')
	return true, writeAtomic(path, out.Bytes())
}

func mustMarshal(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// writeAtomic writes data to a temporary file beside path and renames it over
// path, keeping an existing file's permissions: a reader sees the old file or
// the new one, never a half-written one.
func writeAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcp.json.*.tmp")
	if err != nil {
		return fmt.Errorf("creating a temporary file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}
