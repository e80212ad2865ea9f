package safebuild

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// configSchema compiles docs/buildguard.schema.json.
func configSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "buildguard.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://buildguard.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://buildguard.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConfigAgreesWithSchema runs every configuration through both the
// loader and docs/buildguard.schema.json: each accepts exactly what the
// other accepts, except what JSON Schema cannot express: duplicate keys, and
// a defaultBuild that names no build (the schema says so in words).
func TestConfigAgreesWithSchema(t *testing.T) {
	t.Parallel()
	schema := configSchema(t)
	cases := []struct {
		name, config string
		ok           bool
		errHas       string
		schemaOnly   bool // the schema accepts it, the loader does not
	}{
		{"one build", `{"builds":{"compile":{"command":["./gradlew","classes"]}}}`, true, "", false},
		{"with schema and default", `{"$schema":"docs/buildguard.schema.json","builds":{"a":{"command":["make"],"timeoutSeconds":30},"b":{"command":["mvn","-q","compile"]}},"defaultBuild":"b"}`, true, "", false},
		{"not json", `{"builds":`, false, "not valid JSON", false},
		{"array", `[]`, false, "must be an object", false},
		{"null", `null`, false, "must be an object", false},
		{"no builds", `{}`, false, `"builds" is required`, false},
		{"empty builds", `{"builds":{}}`, false, "at least one build", false},
		{"unknown key", `{"builds":{"a":{"command":["x"]}},"extra":1}`, false, `unknown key "extra"`, false},
		{"unknown build key", `{"builds":{"a":{"command":["x"],"shell":true}}}`, false, `unknown key "shell"`, false},
		{"command a string", `{"builds":{"a":{"command":"./gradlew classes"}}}`, false, "command", false},
		{"empty command", `{"builds":{"a":{"command":[]}}}`, false, "array of 1-256 strings", false},
		{"blank program", `{"builds":{"a":{"command":["  "]}}}`, false, "must name the program", false},
		{"number argument", `{"builds":{"a":{"command":["x",1]}}}`, false, "command[1] must be a string", false},
		{"missing command", `{"builds":{"a":{"timeoutSeconds":3}}}`, false, "array of 1-256 strings", false},
		{"zero timeout", `{"builds":{"a":{"command":["x"],"timeoutSeconds":0}}}`, false, "timeoutSeconds", false},
		{"fractional timeout", `{"builds":{"a":{"command":["x"],"timeoutSeconds":1.5}}}`, false, "timeoutSeconds", false},
		{"long timeout", `{"builds":{"a":{"command":["x"],"timeoutSeconds":86401}}}`, false, "timeoutSeconds", false},
		{"bad name", `{"builds":{"a b":{"command":["x"]}}}`, false, "build name", false},
		{"unknown default", `{"builds":{"a":{"command":["x"]}},"defaultBuild":"b"}`, false, `defaultBuild "b" names no build`, true},
		{"build not an object", `{"builds":{"a":["x"]}}`, false, "must be an object", false},
		// Keys are exact and types are the schema's (docs/safe-build.md#2).
		{"capitalised build key", `{"builds":{"a":{"Command":["x"]}}}`, false, `unknown key "Command" in builds.a`, false},
		{"both cases of a key", `{"builds":{"a":{"command":["x"],"Command":["rm","-rf","/"]}}}`, false, `unknown key "Command"`, false},
		{"capitalised top key", `{"BUILDS":{"a":{"command":["x"]}}}`, false, `unknown key "BUILDS"`, false},
		{"both cases of builds", `{"builds":{"a":{"command":["x"]}},"Builds":{"b":{"command":["y"]}}}`, false, `unknown key "Builds"`, false},
		{"timeout a string", `{"builds":{"a":{"command":["x"],"timeoutSeconds":"5"}}}`, false, "builds.a.timeoutSeconds must be an integer from 1 to 86400, not a string", false},
		{"timeout null", `{"builds":{"a":{"command":["x"],"timeoutSeconds":null}}}`, false, "builds.a.timeoutSeconds must be an integer from 1 to 86400, not null", false},
		{"timeout true", `{"builds":{"a":{"command":["x"],"timeoutSeconds":true}}}`, false, "builds.a.timeoutSeconds must be an integer from 1 to 86400, not a boolean", false},
		{"integral timeout", `{"builds":{"a":{"command":["x"],"timeoutSeconds":30.0}}}`, true, "", false},
		{"command null", `{"builds":{"a":{"command":null}}}`, false, "builds.a.command must be an array of 1-256 strings, the program first, not null", false},
		{"argument true", `{"builds":{"a":{"command":[true]}}}`, false, "builds.a.command[0] must be a string, not a boolean", false},
		{"argument null", `{"builds":{"a":{"command":["x",null]}}}`, false, "builds.a.command[1] must be a string, not null", false},
		{"builds null", `{"builds":null}`, false, `"builds" must be an object, not null`, false},
		{"build null", `{"builds":{"a":null}}`, false, "builds.a must be an object, not null", false},
		{"default null", `{"builds":{"a":{"command":["x"]}},"defaultBuild":null}`, false, `"defaultBuild" must be a string, not null`, false},
		{"default a number", `{"builds":{"a":{"command":["x"]}},"defaultBuild":1}`, false, `"defaultBuild" must be a string, not a number`, false},
		{"schema null", `{"$schema":null,"builds":{"a":{"command":["x"]}}}`, false, `"$schema" must be a string, not null`, false},
		{"log cap", `{"builds":{"a":{"command":["x"]}},"maxLogMiB":8}`, true, "", false},
		{"log cap zero", `{"builds":{"a":{"command":["x"]}},"maxLogMiB":0}`, false, `"maxLogMiB" must be an integer from 1 to 65536, not 0`, false},
		{"log cap a string", `{"builds":{"a":{"command":["x"]}},"maxLogMiB":"8"}`, false, `"maxLogMiB" must be an integer from 1 to 65536, not a string`, false},
		{"log cap in a build", `{"builds":{"a":{"command":["x"],"maxLogMiB":8}}}`, false, `unknown key "maxLogMiB" in builds.a`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var doc any
			schemaOK := false
			if err := json.Unmarshal([]byte(c.config), &doc); err == nil {
				schemaOK = schema.Validate(doc) == nil
			}
			_, err := parseConfig([]byte(c.config))
			if (err == nil) != c.ok || schemaOK != (c.ok || c.schemaOnly) {
				t.Fatalf("loader error %v, schema accepts %v; want ok=%v", err, schemaOK, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("error %q does not say %q", err, c.errHas)
			}
		})
	}
}

func TestConfigRefusesDuplicateKeys(t *testing.T) {
	t.Parallel()
	for _, cfg := range []string{
		`{"builds":{"a":{"command":["x"]}},"builds":{"b":{"command":["y"]}}}`,
		`{"builds":{"a":{"command":["x"]},"a":{"command":["y"]}}}`,
		`{"builds":{"a":{"command":["x"],"command":["y"]}}}`,
	} {
		if _, err := parseConfig([]byte(cfg)); err == nil || !strings.Contains(err.Error(), "duplicate key") {
			t.Errorf("%s: error %v, want a duplicate key", cfg, err)
		}
	}
}

func TestLoadProject(t *testing.T) {
	t.Parallel()
	t.Run("configured", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ConfigFile), `{"builds":{"fast":{"command":["make","classes"],"timeoutSeconds":90},"full":{"command":["make"]}},"defaultBuild":"fast"}`)
		writeFile(t, filepath.Join(dir, "pom.xml"), "<project/>") // a config wins over detection
		p, err := LoadProject(dir)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Select("")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Build{Name: "fast", Command: []string{"make", "classes"}, Timeout: 90 * time.Second, MaxLogBytes: DefaultMaxLogMiB << 20}, b); diff != "" {
			t.Error(diff)
		}
		if b, _ := p.Select("full"); b.Timeout != DefaultBuildTimeout {
			t.Errorf("default timeout %v", b.Timeout)
		}
		_, err = p.Select("nope")
		if !errors.Is(err, ErrUnknownBuild) || !strings.Contains(err.Error(), "fast, full") {
			t.Errorf("unknown build: %v", err)
		}
	})
	t.Run("several builds, no default", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ConfigFile), `{"builds":{"a":{"command":["x"]},"b":{"command":["y"]}}}`)
		p, err := LoadProject(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Select(""); !errors.Is(err, ErrUnknownBuild) || !strings.Contains(err.Error(), "a, b") {
			t.Errorf("no default: %v", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ConfigFile), `{"builds": {"a": {"command": ["x"],}}}`)
		_, err := LoadProject(dir)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), filepath.Join(dir, ConfigFile)) || !strings.Contains(err.Error(), "docs/safe-build.md#2") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, ConfigFile), 0o755)
		if _, err := LoadProject(dir); !errors.Is(err, ErrConfig) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ConfigFile), `{"builds":{"a":{"command":["x"]}}}`+strings.Repeat(" ", MaxConfigBytes))
		if _, err := LoadProject(dir); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("dangling symlink", func(t *testing.T) {
		dir := t.TempDir()
		os.Symlink(filepath.Join(dir, "gone.json"), filepath.Join(dir, ConfigFile))
		if _, err := LoadProject(dir); !errors.Is(err, ErrConfig) {
			t.Errorf("error %v", err)
		}
	})
}

func TestDetect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files []string
		want  map[string][]string
		def   string
	}{
		{"gradle", []string{"settings.gradle"}, map[string][]string{GradleBuild: {"gradle", "classes"}}, GradleBuild},
		{"gradle wrapper", []string{"build.gradle.kts", "gradlew"}, map[string][]string{GradleBuild: {"./gradlew", "classes"}}, GradleBuild},
		{"maven", []string{"pom.xml"}, map[string][]string{MavenBuild: {"mvn", "-q", "compile"}}, MavenBuild},
		{"maven wrapper", []string{"pom.xml", "mvnw"}, map[string][]string{MavenBuild: {"./mvnw", "-q", "compile"}}, MavenBuild},
		{"both", []string{"pom.xml", "build.gradle"}, map[string][]string{GradleBuild: {"gradle", "classes"}, MavenBuild: {"mvn", "-q", "compile"}}, GradleBuild},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range c.files {
				writeFile(t, filepath.Join(dir, f), "")
			}
			p, err := LoadProject(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for n, b := range p.Builds {
				got[n] = b.Command
			}
			if diff := cmp.Diff(c.want, got); diff != "" || p.Default != c.def || p.Configured {
				t.Errorf("builds (-want +got):\n%s default %q configured %v", diff, p.Default, p.Configured)
			}
		})
	}
	t.Run("nothing", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "gradlew"), "") // a wrapper alone is no build
		_, err := LoadProject(dir)
		if !errors.Is(err, ErrNoBuild) || !strings.Contains(err.Error(), ConfigFile) {
			t.Errorf("error %v", err)
		}
	})
}
