package safebuild

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/buildguard/buildguard/internal/boundedfile"
)

// ConfigFile is the name of a project's build configuration, read from the
// project directory (docs/safe-build.md#2).
const ConfigFile = ".buildguard.json"

// Limits of the build configuration (docs/safe-build.md#2).
const (
	// MaxConfigBytes caps the size of .buildguard.json (1 MiB, as every
	// configuration buildguard reads, docs/decisions.md#D13).
	MaxConfigBytes = 1 << 20
	// MaxTimeoutSeconds is the largest timeoutSeconds of a build (one day).
	MaxTimeoutSeconds = 86400
	// DefaultBuildTimeout limits a build that names no timeoutSeconds.
	DefaultBuildTimeout = 10 * time.Minute
	// DefaultMaxLogMiB caps a build's log on disk when the configuration
	// names no maxLogMiB (docs/safe-build.md#9).
	DefaultMaxLogMiB = 64
	// MaxLogMiB is the largest maxLogMiB.
	MaxLogMiB = 65536
	// maxLogKey is the configuration's key for the log cap.
	maxLogKey = "maxLogMiB"
	// maxArgs and maxArgChars bound a command line.
	maxArgs     = 256
	maxArgChars = 4096
)

// The names of the detected builds (docs/safe-build.md#3).
const (
	GradleBuild = "gradle"
	MavenBuild  = "maven"
)

// buildName is the grammar of a build name: what a model may pass as the
// tool's build argument.
var buildName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// The argument errors of a build selection. Each error LoadProject and
// Project.Select return wraps one of them; its text says what to do next.
var (
	// ErrConfig means .buildguard.json exists but cannot be used: it is not
	// a regular file, too large, not valid JSON, or breaks the schema
	// (docs/buildguard.schema.json).
	ErrConfig = errors.New("invalid " + ConfigFile)
	// ErrNoBuild means the project has no .buildguard.json and no Gradle or
	// Maven build to detect.
	ErrNoBuild = errors.New("no build configured")
	// ErrUnknownBuild means the requested build name is not configured, or
	// none was requested and the configuration names no default.
	ErrUnknownBuild = errors.New("unknown build")
)

// Build is one build a project can run.
type Build struct {
	// Name is the build's name in the configuration ("gradle" or "maven"
	// when detected).
	Name string
	// Command is the argument vector, run in the project directory without
	// a shell. A relative argv[0] with a slash (./gradlew) is relative to
	// the project directory; a bare name is looked up in PATH.
	Command []string
	// Timeout limits the whole build (DefaultBuildTimeout when the
	// configuration names none).
	Timeout time.Duration
	// QueueTimeout limits the wait for the build's turn in the project's
	// build queue (queueTimeoutSeconds); 0 means the build's own timeout
	// (docs/decisions.md#D18).
	QueueTimeout time.Duration
	// MaxLogBytes caps the build's log on disk (maxLogMiB of the
	// configuration; 0 means DefaultMaxLogMiB).
	MaxLogBytes int64
}

// Project is the set of builds of one project directory.
type Project struct {
	// Dir is the project directory, absolute.
	Dir string
	// Configured is true when the builds come from .buildguard.json, false
	// when they were detected.
	Configured bool
	// Builds are the builds by name.
	Builds map[string]Build
	// Default is the build run when none is named; "" when the
	// configuration has several builds and names no default.
	Default string
}

// Names returns the build names in order.
func (p *Project) Names() []string {
	names := make([]string, 0, len(p.Builds))
	for n := range p.Builds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Select returns the build called name, or the default build when name is
// "". The error wraps ErrUnknownBuild and lists the names there are.
func (p *Project) Select(name string) (Build, error) {
	if name == "" {
		if p.Default == "" {
			return Build{}, fmt.Errorf("%w: %s configures several builds (%s) and no defaultBuild; name one of them", ErrUnknownBuild, ConfigFile, strings.Join(p.Names(), ", "))
		}
		name = p.Default
	}
	b, ok := p.Builds[name]
	if !ok {
		where := "configured in " + filepath.Join(p.Dir, ConfigFile)
		if !p.Configured {
			where = "detected in " + p.Dir + " (add a " + ConfigFile + " to configure others)"
		}
		return Build{}, fmt.Errorf("%w %q: the builds %s are %s", ErrUnknownBuild, name, strings.Join(p.Names(), ", "), where)
	}
	return b, nil
}

// LoadProject reads dir/.buildguard.json, or detects the builds of dir when
// there is none (docs/safe-build.md#3). The error wraps ErrConfig or
// ErrNoBuild.
func LoadProject(dir string) (*Project, error) {
	path := filepath.Join(dir, ConfigFile)
	data, err := readConfig(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return detect(dir)
	case err != nil:
		return nil, err
	}
	p, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w; see docs/safe-build.md#2", ErrConfig, path, err)
	}
	p.Dir = dir
	return p, nil
}

// readConfig reads a regular file (or a symlink to one) of at most
// MaxConfigBytes, with a bound on the read itself.
func readConfig(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, lerr := os.Lstat(path); lerr == nil {
				return nil, fmt.Errorf("%w: %s is a dangling symlink; remove it or point it at the configuration", ErrConfig, path)
			}
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrConfig, path)
	}
	if fi.Size() > MaxConfigBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrConfig, path, MaxConfigBytes)
	}
	// Read without ever waiting on a named pipe put there since the Stat.
	data, err := boundedfile.ReadFile(path, MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrConfig, path, err)
	}
	return data, nil
}

// parseConfig checks the configuration against the rules of the schema
// (docs/buildguard.schema.json) and returns its builds. Keys are exact
// (case-sensitive), unknown ones are refused, and every value must have
// the schema's type: encoding/json's case-insensitive keys and lenient
// types are never relied on.
func parseConfig(data []byte) (*Project, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not UTF-8 text")
	}
	if err := checkKeys(data); err != nil {
		return nil, err
	}
	top, err := object(data, "the configuration", "builds", "defaultBuild", maxLogKey, "$schema")
	if err != nil {
		return nil, err
	}
	if raw, ok := top["$schema"]; ok {
		if _, err := stringValue(raw, `"$schema"`); err != nil {
			return nil, err
		}
	}
	raw, ok := top["builds"]
	if !ok {
		return nil, errors.New(`"builds" is required: {"builds": {"NAME": {"command": ["argv0", "arg"]}}}`)
	}
	builds, err := object(raw, `"builds"`)
	if err != nil {
		return nil, err
	}
	if len(builds) == 0 {
		return nil, errors.New(`"builds" must name at least one build`)
	}
	maxLog := int64(DefaultMaxLogMiB) << 20
	if raw, ok := top[maxLogKey]; ok {
		n, err := integerValue(raw, `"`+maxLogKey+`"`, 1, MaxLogMiB)
		if err != nil {
			return nil, err
		}
		maxLog = n << 20
	}
	p := &Project{Configured: true, Builds: map[string]Build{}}
	for name, raw := range builds {
		if !buildName().MatchString(name) {
			return nil, fmt.Errorf("build name %q must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit", name)
		}
		b, err := parseBuild(name, raw)
		if err != nil {
			return nil, err
		}
		b.MaxLogBytes = maxLog
		p.Builds[name] = b
	}
	if raw, ok := top["defaultBuild"]; ok {
		def, err := stringValue(raw, `"defaultBuild"`)
		if err != nil {
			return nil, err
		}
		if _, ok := p.Builds[def]; !ok {
			return nil, fmt.Errorf("defaultBuild %q names no build in \"builds\" (%s)", def, strings.Join(p.Names(), ", "))
		}
		p.Default = def
	} else if len(p.Builds) == 1 {
		p.Default = p.Names()[0]
	}
	return p, nil
}

func parseBuild(name string, raw json.RawMessage) (Build, error) {
	where := fmt.Sprintf("builds.%s", name)
	fields, err := object(raw, where, "command", "timeoutSeconds", "queueTimeoutSeconds")
	if err != nil {
		return Build{}, err
	}
	var command []json.RawMessage
	if raw, ok := fields["command"]; ok {
		if kind(raw) != "an array" {
			return Build{}, fmt.Errorf("%s.command must be an array of 1-%d strings, the program first, not %s", where, maxArgs, kind(raw))
		}
		if err := json.Unmarshal(raw, &command); err != nil {
			return Build{}, fmt.Errorf("%s.command: %w", where, describeJSONError(err))
		}
	}
	if len(command) == 0 || len(command) > maxArgs {
		return Build{}, fmt.Errorf("%s.command must be an array of 1-%d strings, the program first", where, maxArgs)
	}
	b := Build{Name: name, Timeout: DefaultBuildTimeout, MaxLogBytes: int64(DefaultMaxLogMiB) << 20}
	for i, a := range command {
		s, err := stringValue(a, fmt.Sprintf("%s.command[%d]", where, i))
		if err != nil {
			return Build{}, err
		}
		if len(s) > maxArgChars || strings.ContainsRune(s, 0) {
			return Build{}, fmt.Errorf("%s.command[%d] must be at most %d bytes without NUL", where, i, maxArgChars)
		}
		if i == 0 && strings.TrimSpace(s) == "" {
			return Build{}, fmt.Errorf("%s.command[0] must name the program", where)
		}
		b.Command = append(b.Command, s)
	}
	if raw, ok := fields["timeoutSeconds"]; ok {
		n, err := integerValue(raw, where+".timeoutSeconds", 1, MaxTimeoutSeconds)
		if err != nil {
			return Build{}, err
		}
		b.Timeout = time.Duration(n) * time.Second
	}
	if raw, ok := fields["queueTimeoutSeconds"]; ok {
		n, err := integerValue(raw, where+".queueTimeoutSeconds", 1, MaxTimeoutSeconds)
		if err != nil {
			return Build{}, err
		}
		b.QueueTimeout = time.Duration(n) * time.Second
	}
	return b, nil
}

// object decodes a JSON object into its members by exact key, refusing any
// key not in allowed (none given: any key).
func object(data []byte, what string, allowed ...string) (map[string]json.RawMessage, error) {
	if k := kind(data); k != "an object" {
		return nil, fmt.Errorf("%s must be an object, not %s", what, k)
	}
	var m map[string]json.RawMessage
	if err := strictDecode(data, &m); err != nil {
		return nil, err
	}
	if len(allowed) > 0 {
		for _, k := range sortedKeys(m) {
			if !slices.Contains(allowed, k) {
				return nil, fmt.Errorf("unknown key %q in %s: the keys are %s (exactly so: keys are case-sensitive)", k, what, strings.Join(allowed, ", "))
			}
		}
	}
	return m, nil
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stringValue is a JSON string, or an error naming where and the kind found.
func stringValue(raw json.RawMessage, where string) (string, error) {
	var s string
	if kind(raw) != "a string" || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%s must be a string, not %s", where, kind(raw))
	}
	return s, nil
}

// integerValue is a JSON integer from lo to hi (an integral number such as
// 30 or 30.0, as JSON Schema's "integer"), or an error naming where, the
// range and the kind found.
func integerValue(raw json.RawMessage, where string, lo, hi int64) (int64, error) {
	want := fmt.Sprintf("%s must be an integer from %d to %d", where, lo, hi)
	if k := kind(raw); k != "a number" {
		return 0, fmt.Errorf("%s, not %s", want, k)
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, fmt.Errorf("%s, not %s", want, bytes.TrimSpace(raw))
	}
	return int64(f), nil
}

// kind names the JSON type of a value as a message says it.
func kind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// strictDecode decodes one JSON value into v, refusing trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// describeJSONError words a decoding error for the person editing the file.
func describeJSONError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("not valid JSON at byte %d: %w", se.Offset, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not valid JSON: it ends before the value is complete")
	}
	return err
}

// checkKeys refuses duplicate keys at any depth (encoding/json would keep
// the last one silently) and nesting deeper than the configuration needs.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   []string
		expect bool // next token in an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return describeJSONError(err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key := tok.(string)
			if slices.Contains(top.keys, key) {
				return fmt.Errorf("duplicate key %q", key)
			}
			top.keys = append(top.keys, key)
			top.expect = false
			continue
		}
		if top != nil && top.object {
			top.expect = true
		}
		switch tok {
		case json.Delim('{'):
			if len(stack) >= 16 {
				return errors.New("nested deeper than 16 levels")
			}
			stack = append(stack, &frame{object: true, expect: true})
		case json.Delim('['):
			if len(stack) >= 16 {
				return errors.New("nested deeper than 16 levels")
			}
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// detect offers the Gradle and Maven builds of dir (docs/safe-build.md#3):
// ./gradlew classes (or gradle classes) when dir has a Gradle build, and
// ./mvnw -q compile (or mvn -q compile) when it has a pom.xml. Gradle is
// the default when both are present.
func detect(dir string) (*Project, error) {
	p := &Project{Dir: dir, Builds: map[string]Build{}}
	if anyRegular(dir, "settings.gradle", "settings.gradle.kts", "build.gradle", "build.gradle.kts") {
		argv0 := "gradle"
		if anyRegular(dir, "gradlew") {
			argv0 = "./gradlew"
		}
		p.Builds[GradleBuild] = Build{Name: GradleBuild, Command: []string{argv0, "classes"}, Timeout: DefaultBuildTimeout}
		p.Default = GradleBuild
	}
	if anyRegular(dir, "pom.xml") {
		argv0 := "mvn"
		if anyRegular(dir, "mvnw") {
			argv0 = "./mvnw"
		}
		p.Builds[MavenBuild] = Build{Name: MavenBuild, Command: []string{argv0, "-q", "compile"}, Timeout: DefaultBuildTimeout}
		if p.Default == "" {
			p.Default = MavenBuild
		}
	}
	if len(p.Builds) == 0 {
		return nil, fmt.Errorf("%w: %s has no %s and no Gradle (settings.gradle, build.gradle) or Maven (pom.xml) build; write a %s naming the build command (docs/safe-build.md#2)", ErrNoBuild, dir, ConfigFile, ConfigFile)
	}
	return p, nil
}

func anyRegular(dir string, names ...string) bool {
	for _, n := range names {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}
