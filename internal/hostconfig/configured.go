package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/buildguard/buildguard/internal/boundedfile"
)

// ErrNoEntry marks a host file that does not exist or has no buildguard entry.
var ErrNoEntry = errors.New("has no buildguard entry")

// Configured is buildguard's entry as its host would start it.
type Configured struct {
	// Command and Args are the entry's command and arguments.
	Command string
	Args    []string
	// Env are the entry's environment variables, added to the host's own.
	Env []string
	// Dir is the working directory: the entry's cwd, else the host's (WorkDir).
	Dir string
}

// ReadConfigured reads host h's entry from its file, with the bound of
// docs/decisions.md#D13. VS Code's ${workspaceFolder} is replaced by the
// project directory, as VS Code does.
func ReadConfigured(h Host, env Env) (Configured, error) {
	path := h.File(env)
	b, err := boundedfile.ReadFile(path, boundedfile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return Configured{}, fmt.Errorf("the file does not exist: %w", ErrNoEntry)
	}
	if err != nil {
		return Configured{}, err
	}
	c, err := ReadConfiguredData(h, b)
	if err != nil {
		return Configured{}, err
	}
	if c.Dir == "" {
		c.Dir = h.WorkDir(env)
	}
	if h.Name == "vscode" {
		expand := func(s string) string { return strings.ReplaceAll(s, "${workspaceFolder}", env.ProjectDir) }
		c.Command, c.Dir = expand(c.Command), expand(c.Dir)
		for i := range c.Args {
			c.Args[i] = expand(c.Args[i])
		}
	}
	return c, nil
}

// ReadConfiguredData reads host h's entry from the file's contents b; Dir
// is the entry's cwd, empty when it has none.
func ReadConfiguredData(h Host, b []byte) (Configured, error) {
	doc, err := decode(h.Format, b)
	if err != nil {
		return Configured{}, fmt.Errorf("the file %w: %v", ErrSyntax, err)
	}
	servers, _ := doc[h.Container].(map[string]any)
	entry, isObject := servers[EntryName].(map[string]any)
	if !isObject {
		return Configured{}, fmt.Errorf("the file %w (%s)", ErrNoEntry, h.Path())
	}
	var c Configured
	var ok bool
	if c.Command, ok = entry["command"].(string); !ok || c.Command == "" {
		return Configured{}, fmt.Errorf("%s has no command", h.Path())
	}
	if raw, present := entry["args"]; present {
		list, ok := raw.([]any)
		if !ok {
			return Configured{}, fmt.Errorf("%s.args is not a list of strings", h.Path())
		}
		for _, a := range list {
			s, ok := a.(string)
			if !ok {
				return Configured{}, fmt.Errorf("%s.args is not a list of strings", h.Path())
			}
			c.Args = append(c.Args, s)
		}
	}
	if vars, ok := entry["env"].(map[string]any); ok {
		for k, v := range vars {
			c.Env = append(c.Env, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(c.Env)
	}
	if cwd, ok := entry["cwd"].(string); ok && cwd != "" {
		c.Dir = cwd
	}
	return c, nil
}
