package importcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/buildguard/buildguard"

// list runs `go list -json` with the given arguments for goos and decodes
// the packages.
func list(t *testing.T, goos string, args ...string) []Package {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = "../../.."
	cmd.Env = append(cmd.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v for %s: %v\n%s", args, goos, err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %v for %s listed no packages", args, goos)
	}
	return pkgs
}

// TestRepository applies the layering to every package of the module and to
// the mage targets, for each GOOS the release builds.
func TestRepository(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "windows", "darwin"} {
		pkgs := append(list(t, goos, "./..."), list(t, goos, "-tags", "mage", "./magefiles")...)
		for _, p := range Check(module, pkgs) {
			t.Errorf("%s: %s", goos, p)
		}
	}
}

// TestCheck: each kind of upward import is found, and allowed ones are not.
func TestCheck(t *testing.T) {
	t.Parallel()
	m := func(rel ...string) []string {
		var out []string
		for _, r := range rel {
			out = append(out, module+"/"+r)
		}
		return out
	}
	pkgs := []Package{
		{module + "/agentproto", append(m("internal/proc"), "fmt")},
		{module + "/buildguard", m("agentproto", "internal/proc", "mcp")},
		{module + "/mcp", m("agentproto", "internal/boundedfile", "harness/fakeagent", "internal/cli")},
		{module + "/internal/safebuild", m("buildguard", "internal/cli")},
		{module + "/internal/cli", m("mcp", "buildguard", "internal/hostconfig")},
		{module + "/cmd/buildguard", m("internal/cli", "mcp")},
		{module + "/harness/conformance", m("harness/jvm", "agentproto", "cmd/buildguard")},
		{module + "/tools", nil},
		{"example.com/other", m("harness/fakeagent")},
	}
	want := []string{
		"agentproto imports internal/proc: agentproto may import no package of the module",
		"buildguard imports mcp: buildguard may import only agentproto, internal/...",
		"cmd/buildguard imports mcp: cmd/buildguard may import only internal/cli",
		"harness/conformance imports cmd/buildguard: harness/... may import only agentproto, buildguard, mcp, internal/..., harness/...",
		"internal/safebuild imports internal/cli: internal/... may import only agentproto, buildguard, internal/...",
		"mcp imports harness/fakeagent: mcp may import only agentproto, buildguard, internal/...",
		"mcp imports internal/cli: mcp may import only agentproto, buildguard, internal/...",
		"tools: no layering rule covers it; add one to internal/repocheck/importcheck",
	}
	if diff := cmp.Diff(want, Check(module, pkgs)); diff != "" {
		t.Errorf("Check (-want +got):\n%s", diff)
	}
}
