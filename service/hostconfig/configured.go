package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

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
	// Dir is the working directory: the entry's cwd, else the host's
	// (WorkDir); a relative cwd is below the host's.
	Dir string
}

// Checked is what `init --check` starts for one host: its entry as the
// host would start it, or why the host would not start it as buildguard
// serving the project.
type Checked struct {
	// Host is the host; File is its config file.
	Host Host
	File string
	// Entry is the entry as the host starts it; set when Err is nil.
	Entry Configured
	// Err says why there is nothing to start: the file has no entry
	// (ErrNoEntry), the host would not start it, or it serves another
	// project.
	Err error
	// Unchecked names the settings files that exist but could not be read
	// for settings that disable the entry (Overrides).
	Unchecked []string
}

// Checks reads, for each host of req (Select), what `init --check` starts
// (docs/decisions.md#D15): the entry as ReadConfigured reads it, with
// lookup's variables, which no setting kept elsewhere disables (Overrides)
// and which serves the project. A host whose file has no entry is left
// out unless asked for by name or with All.
func Checks(req Request, lookup func(string) (string, bool)) ([]Checked, error) {
	env, named := req.Env, len(req.Names) > 0 || req.All
	hosts, err := Select(env, req.Names, req.All)
	if err != nil {
		return nil, err
	}
	var out []Checked
	for _, h := range hosts {
		c, err := ReadConfigured(h, env, lookup)
		if errors.Is(err, ErrNoEntry) && !named {
			continue
		}
		ch := Checked{Host: h, File: h.File(env), Entry: c}
		if err == nil {
			var problems []string
			if problems, ch.Unchecked = Overrides(h, env); len(problems) > 0 {
				err = fmt.Errorf("the host would not start this entry: %s", strings.Join(problems, "; "))
			}
		}
		if err == nil {
			err = servesProject(c, env.ProjectDir)
		}
		ch.Err = err
		out = append(out, ch)
	}
	return out, nil
}

// servesProject checks that the entry serves dir: its --project-dir, or
// without one the directory the host starts it in, is dir.
func servesProject(c Configured, dir string) error {
	served, how := c.Dir, "it has no --project-dir and the host starts it in"
	for i, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--project-dir="); ok {
			served, how = v, "it serves"
		} else if a == "--project-dir" && i+1 < len(c.Args) {
			served, how = c.Args[i+1], "it serves"
		}
	}
	if !filepath.IsAbs(served) {
		served = filepath.Join(c.Dir, served)
	}
	a, errA := os.Stat(served)
	b, errB := os.Stat(dir)
	if errA == nil && errB == nil && os.SameFile(a, b) {
		return nil
	}
	return fmt.Errorf("the entry is for another project: %s %s, not %s; run buildguard init in this project to point it here", how, served, dir)
}

// ReadConfigured reads host h's entry from its file with the bounds and
// checks init's edits have (docs/decisions.md#D13), refuses an entry the
// host would not start (ErrWillNotStart), and expands the variables the
// host expands (docs/hosts.md), reading values with lookup (os.LookupEnv).
func ReadConfigured(h Host, env Env, lookup func(string) (string, bool)) (Configured, error) {
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
	if err := expandEntry(h, env, lookup, &c); err != nil {
		return Configured{}, err
	}
	switch {
	case c.Dir == "":
		c.Dir = h.WorkDir(env)
	case !filepath.IsAbs(c.Dir):
		// The host starts the server from its own working directory, so a
		// relative cwd is below that, not below init's (docs/hosts.md#1).
		c.Dir = filepath.Join(h.WorkDir(env), c.Dir)
	}
	return c, nil
}

// ReadConfiguredData reads host h's entry from the file's contents b,
// variables unexpanded; Dir is the entry's cwd, empty when it has none.
func ReadConfiguredData(h Host, b []byte) (Configured, error) {
	doc, err := parse(h, b)
	if err != nil {
		return Configured{}, fmt.Errorf("the file %w", err)
	}
	servers, _ := doc[h.Container].(map[string]any)
	entry, isObject := servers[EntryName].(map[string]any)
	if !isObject {
		return Configured{}, fmt.Errorf("the file %w (%s)", ErrNoEntry, h.Path())
	}
	if problems := notStarted(h, doc, false); len(problems) > 0 {
		return Configured{}, fmt.Errorf("the host would not start this entry: %s", strings.Join(problems, "; "))
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

// parse decodes a host file with every check an edit makes first: valid
// UTF-8, nesting within maxDepth, no duplicate key, an object at the top.
// A form init cannot edit in place (a TOML inline table) reads fine.
func parse(h Host, b []byte) (map[string]any, error) {
	_, err := h.Format.syntax().edit(b, h.Container, Entry{Command: "-", Args: []string{}})
	if err != nil && !errors.Is(err, ErrUnsupported) {
		return nil, err
	}
	doc, err := decode(h.Format, b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return doc, nil
}

// The variables hosts replace in an entry (docs/hosts.md).
var (
	// dollarBrace is ${NAME}, ${NAME:-default}, ${env:NAME} and the
	// editors' ${workspaceFolder}-style names.
	dollarBrace = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([^}]*)\}`) })
	// dollarWord is Gemini CLI's $NAME.
	dollarWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$(\w+)|\$\{([^}]+)\}`) })
)

// expandEntry replaces the variables host h replaces in the command, the
// arguments, the env values and the cwd, as the host does: an unknown
// variable is an error where the host refuses it, and stays as written
// where the host leaves it.
func expandEntry(h Host, env Env, lookup func(string) (string, bool), c *Configured) error {
	expand := expander(h, env, lookup)
	if expand == nil {
		return nil
	}
	var err error
	one := func(s string) string {
		out, e := expand(s)
		if e != nil && err == nil {
			err = e
		}
		return out
	}
	c.Command, c.Dir = one(c.Command), one(c.Dir)
	for i := range c.Args {
		c.Args[i] = one(c.Args[i])
	}
	for i, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		c.Env[i] = k + "=" + one(v)
	}
	return err
}

// expander returns host h's variable expansion, or nil when it expands
// nothing (Codex).
func expander(h Host, env Env, lookup func(string) (string, bool)) func(string) (string, error) {
	editor := map[string]string{
		"workspaceFolder":         env.ProjectDir,
		"workspaceFolderBasename": filepath.Base(env.ProjectDir),
		"userHome":                env.Home,
		"pathSeparator":           string(filepath.Separator),
		"/":                       string(filepath.Separator),
	}
	switch h.Name {
	case "claude":
		// ${VAR} and ${VAR:-default}; a variable that is unset and has no
		// default makes Claude Code reject the entry.
		return replaceAll(dollarBrace(), func(m []string) (string, error) {
			name, def, hasDef := strings.Cut(m[1], ":-")
			if v, ok := lookup(name); ok && (v != "" || !hasDef) {
				return v, nil
			}
			if hasDef {
				return def, nil
			}
			return "", fmt.Errorf("the entry uses ${%s}, which is not set; Claude Code would not start it", name)
		})
	case "vscode", "cursor", "windsurf":
		// The editors' ${name} and ${env:NAME}; Windsurf knows only ${env:NAME}.
		return replaceAll(dollarBrace(), func(m []string) (string, error) {
			if name, ok := strings.CutPrefix(m[1], "env:"); ok {
				v, _ := lookup(name)
				return v, nil
			}
			if v, ok := editor[m[1]]; ok && h.Name != "windsurf" {
				return v, nil
			}
			if strings.HasPrefix(m[1], "input:") {
				return "", fmt.Errorf("the entry uses %s, which %s asks the user for; --check cannot answer it", m[0], h.Title)
			}
			return m[0], nil
		})
	case "gemini":
		// $NAME and ${NAME}, left as written when unset.
		return replaceAll(dollarWord(), func(m []string) (string, error) {
			name := m[1] + m[2]
			if v, ok := lookup(name); ok {
				return v, nil
			}
			return m[0], nil
		})
	}
	return nil
}

func replaceAll(re *regexp.Regexp, f func(m []string) (string, error)) func(string) (string, error) {
	return func(s string) (string, error) {
		var err error
		out := re.ReplaceAllStringFunc(s, func(match string) string {
			v, e := f(re.FindStringSubmatch(match))
			if e != nil && err == nil {
				err = e
			}
			return v
		})
		return out, err
	}
}
