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
		return Configured{}, fmt.Errorf("%s does not exist: %w", path, ErrNoEntry)
	}
	if err != nil {
		return Configured{}, err
	}
	doc, err := decode(h.Format, b)
	if err != nil {
		return Configured{}, fmt.Errorf("%s %w: %v", path, ErrSyntax, err)
	}
	servers, _ := doc[h.Container].(map[string]any)
	entry, ok := servers[EntryName].(map[string]any)
	if !ok {
		return Configured{}, fmt.Errorf("%s %w (%s)", path, ErrNoEntry, h.Path())
	}
	expand := func(s string) string {
		if h.Name == "vscode" {
			return strings.ReplaceAll(s, "${workspaceFolder}", env.ProjectDir)
		}
		return s
	}
	c := Configured{Dir: h.WorkDir(env)}
	if c.Command, ok = entry["command"].(string); !ok || c.Command == "" {
		return Configured{}, fmt.Errorf("%s: %s has no command", path, h.Path())
	}
	c.Command = expand(c.Command)
	if raw, present := entry["args"]; present {
		list, ok := raw.([]any)
		if !ok {
			return Configured{}, fmt.Errorf("%s: %s.args is not a list of strings", path, h.Path())
		}
		for _, a := range list {
			s, ok := a.(string)
			if !ok {
				return Configured{}, fmt.Errorf("%s: %s.args is not a list of strings", path, h.Path())
			}
			c.Args = append(c.Args, expand(s))
		}
	}
	if vars, ok := entry["env"].(map[string]any); ok {
		for k, v := range vars {
			c.Env = append(c.Env, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(c.Env)
	}
	if cwd, ok := entry["cwd"].(string); ok && cwd != "" {
		c.Dir = expand(cwd)
	}
	return c, nil
}
