package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/tools"
)

const toolsnapsDir = "__toolsnaps__"

// snapVersions are the session states whose tools/list entries are
// snapshotted; "pre-init" is a session that never sent initialize.
var snapVersions = []string{"pre-init", protocol.Version20241105, protocol.Version20250326, protocol.Version20250618, protocol.Version20251125}

// listTools runs tools/list through a real server session at version
// ("pre-init": no initialize) and returns the raw entries.
func listTools(t *testing.T, version string) []json.RawMessage {
	t.Helper()
	s := startSession(t, &mcptest.FakeCaller{}, time.Second)
	if version != "pre-init" {
		s.Send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `"}}`)
		if got := s.Recv(); !strings.Contains(got, `"protocolVersion":"`+version+`"`) {
			t.Fatalf("initialize at %s: %s", version, got)
		}
	}
	s.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	line := s.Recv()
	var resp struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatal(err)
	}
	if keys := slices.Sorted(mapKeys(resp.Result)); !slices.Equal(keys, []string{"tools"}) {
		t.Errorf("tools/list result has keys %v, want only tools", keys)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(resp.Result["tools"], &entries); err != nil {
		t.Fatal(err)
	}
	return entries
}

func mapKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestToolSnaps compares every tool's tools/list entry, per session version,
// with __toolsnaps__/<tool>@<version>.snap. UPDATE_TOOLSNAPS=true rewrites
// them. A missing snapshot fails, and so does one no tool produces.
func TestToolSnaps(t *testing.T) {
	update := os.Getenv("UPDATE_TOOLSNAPS") == "true"
	produced := map[string]bool{}
	for _, v := range snapVersions {
		entries := listTools(t, v)
		var names []string
		for _, e := range entries {
			var tool struct{ Name string }
			if err := json.Unmarshal(e, &tool); err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, e, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			file := filepath.Join(toolsnapsDir, fmt.Sprintf("%s@%s.snap", tool.Name, v))
			produced[filepath.Base(file)] = true
			if update {
				if err := os.MkdirAll(toolsnapsDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("snapshot %s missing (run with UPDATE_TOOLSNAPS=true): %v", file, err)
				continue
			}
			if diff := cmp.Diff(string(want), pretty.String()); diff != "" {
				t.Errorf("%s changed (-snapshot +now); if intended, run with UPDATE_TOOLSNAPS=true:\n%s", file, diff)
			}
		}
		if !slices.Equal(names, tools.Names()) {
			t.Errorf("%s: tools/list order %v, want %v", v, names, tools.Names())
		}
	}
	files, err := os.ReadDir(toolsnapsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !produced[f.Name()] {
			if update {
				_ = os.Remove(filepath.Join(toolsnapsDir, f.Name()))
				continue
			}
			t.Errorf("orphaned snapshot %s: no tool produces it", f.Name())
		}
	}
}

// TestToolShapePerVersion checks the docs/decisions.md#D5 rules on the entries themselves, so a
// wrong snapshot cannot be accepted by regenerating it.
func TestToolShapePerVersion(t *testing.T) {
	t.Parallel()
	for _, v := range snapVersions {
		sh := shapeFor(strings.TrimPrefix(v, "pre-init"))
		for _, e := range listTools(t, v) {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(e, &m); err != nil {
				t.Fatal(err)
			}
			_, hasOut := m["outputSchema"]
			_, hasAnn := m["annotations"]
			if hasOut != sh.outputSchema || hasAnn != sh.annotations {
				t.Errorf("%s %s: outputSchema=%v annotations=%v, want %v %v", v, m["name"], hasOut, hasAnn, sh.outputSchema, sh.annotations)
			}
			// Only reclazz_safe_build, and only in a 2025-11-25 session,
			// carries execution (docs/decisions.md#D17).
			_, hasExec := m["execution"]
			if wantExec := v == protocol.Version20251125 && string(m["name"]) == `"`+tools.ToolSafeBuild+`"`; hasExec != wantExec ||
				hasExec && string(m["execution"]) != `{"taskSupport":"optional"}` {
				t.Errorf("%s %s: execution %s, want it only for %s at %s", v, m["name"], m["execution"], tools.ToolSafeBuild, protocol.Version20251125)
			}
			for k := range m {
				if !slices.Contains([]string{"name", "description", "inputSchema", "outputSchema", "annotations", "execution"}, k) {
					t.Errorf("%s %s: unexpected key %q", v, m["name"], k)
				}
			}
		}
	}
	if shapeFor("") != shapeFor(protocol.Version20241105) {
		t.Error("a session before initialize must have the 2024-11-05 shape")
	}
}

// TestEveryToolSetsAnnotations: every definition states its hints explicitly
// (docs/mcp-server.md#4.1): the three mutating tools all four, the six observers readOnly and
// openWorld only.
func TestEveryToolSetsAnnotations(t *testing.T) {
	t.Parallel()
	mutatingTools := []string{tools.ToolScan, tools.ToolBuild, tools.ToolReloadControl, tools.ToolSafeBuild}
	for _, def := range tools.Definitions() {
		a := def.Annotations
		if a == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations or openWorldHint not set", def.Name)
			continue
		}
		got, _ := json.Marshal(renderAnnotations(a))
		want := `{"readOnlyHint":true,"openWorldHint":false}`
		if slices.Contains(mutatingTools, def.Name) {
			want = `{"readOnlyHint":false,"openWorldHint":true,"destructiveHint":true,"idempotentHint":false}`
			if a.DestructiveHint == nil {
				t.Errorf("%s: destructiveHint not set", def.Name)
			}
		}
		if string(got) != want {
			t.Errorf("%s: annotations %s, want %s", def.Name, got, want)
		}
	}
}

// TestInputSchemas checks the docs/mcp-server.md#4.1 details a snapshot review could miss.
func TestInputSchemas(t *testing.T) {
	t.Parallel()
	defaults := map[string]string{
		tools.ToolStatus: "2000", tools.ToolScan: "2000", tools.ToolPending: "2000", tools.ToolDiagnose: "2000",
		tools.ToolDoctor: "5000", tools.ToolReloadControl: "5000", tools.ToolBuild: "5000", tools.ToolVerify: "5000", tools.ToolVerifyBatch: "5000",
		tools.ToolSafeBuild: "600000",
	}
	for _, def := range tools.Definitions() {
		raw, err := json.Marshal(def.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		if s.Type != "object" || s.Required == nil {
			t.Errorf("%s: type %q required %v", def.Name, s.Type, s.Required)
		}
		if !bytes.HasPrefix(raw, []byte(`{"type":"object","properties":{"projectDir":{"type":"string","maxLength":4096,"description":`)) {
			t.Errorf("%s: input schema does not start with the common properties in order: %.120s", def.Name, raw)
		}
		order := []string{`"projectDir"`, `"portFile"`, `"port"`, `"hybrisHome"`, `"timeoutMs"`}
		last := -1
		for _, k := range order {
			i := bytes.Index(raw, []byte(k+":"))
			if i <= last {
				t.Errorf("%s: %s out of order", def.Name, k)
			}
			last = i
		}
		var timeout struct{ Description string }
		_ = json.Unmarshal(s.Properties["timeoutMs"], &timeout)
		if !strings.Contains(timeout.Description, "Default "+defaults[def.Name]) {
			t.Errorf("%s: timeoutMs description %q does not state default %s", def.Name, timeout.Description, defaults[def.Name])
		}
	}
}
