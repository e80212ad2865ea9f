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

// m makes module paths of module-relative ones.
func m(rel ...string) []string {
	var out []string
	for _, r := range rel {
		out = append(out, module+"/"+r)
	}
	return out
}

// TestCheckRefusesTheWrongArrows: each arrow that points up a tier, or from
// product code to a test helper, is a problem naming both tiers; the same
// packages' allowed imports are not.
func TestCheckRefusesTheWrongArrows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to, want string
	}{
		{"buildguard", "service/hostconfig", "buildguard (core) imports service/hostconfig (services): core may import only core, wire, leaves"},
		{"internal/proc", "service/safebuild", "internal/proc (leaves) imports service/safebuild (services): leaves may import no package of the module"},
		{"internal/boundedfile", "buildguard", "internal/boundedfile (leaves) imports buildguard (core): leaves may import no package of the module"},
		{"buildguard", "internal/testsupport/testbin", "buildguard (core) imports internal/testsupport/testbin (test helpers): core may import only core, wire, leaves"},
		{"mcp", "internal/testsupport/lockedbuf", "mcp (fronts) imports internal/testsupport/lockedbuf (test helpers): fronts may import only fronts, services, core, wire, leaves"},
		{"service/tools", "service/tools/toolstest", "service/tools (services) imports service/tools/toolstest (test helpers): services may import only services, core, wire, leaves"},
		{"mcp/httpfront", "harness/mcptest", "mcp/httpfront (fronts) imports harness/mcptest (proof): fronts may import only fronts, services, core, wire, leaves"},
	} {
		pkgs := []Package{{module + "/" + c.from, m(c.to)}}
		if diff := cmp.Diff([]string{c.want}, Check(module, pkgs)); diff != "" {
			t.Errorf("%s -> %s (-want +got):\n%s", c.from, c.to, diff)
		}
	}
	allowed := []Package{
		{module + "/buildguard", m("agentproto", "internal/proc")},
		{module + "/service/safebuild", m("buildguard", "agentproto", "service/hostconfig")},
		{module + "/mcp", m("agentproto", "buildguard", "internal/boundedfile", "service/safebuild")},
		{module + "/harness/clients", m("harness/jvm", "internal/testsupport/lockedbuf", "internal/proc", "mcp")},
		{module + "/harness/mcptest", m("harness/fakeagent", "service/safebuild", "service/tools")},
	}
	if got := Check(module, allowed); len(got) != 0 {
		t.Errorf("allowed arrows refused: %q", got)
	}
}

// TestProductNeverImportsWhatStandsBeside: no product tier may import test
// helpers, repository checks, the proof or the build.
func TestProductNeverImportsWhatStandsBeside(t *testing.T) {
	t.Parallel()
	for _, from := range []Tier{Fronts, Services, Core, Wire, Leaves} {
		for _, to := range arrows[from] {
			switch to {
			case TestHelpers, RepoChecks, Proof, Build:
				t.Errorf("%s may import %s", from, to)
			}
		}
	}
}

// TestCheck: each kind of upward import is found, and allowed ones are not;
// a package without a place fails with where to add it.
func TestCheck(t *testing.T) {
	t.Parallel()
	pkgs := []Package{
		{module + "/agentproto", append(m("internal/proc"), "fmt")},
		{module + "/buildguard", m("agentproto", "internal/proc", "mcp")},
		{module + "/mcp", m("agentproto", "internal/boundedfile", "harness/fakeagent", "cli")},
		{module + "/service/safebuild", m("buildguard", "cli")},
		{module + "/cli", m("mcp", "buildguard", "service/hostconfig")},
		{module + "/cmd/buildguard", m("cli", "mcp")},
		{module + "/harness/conformance", m("harness/jvm", "agentproto", "cmd/buildguard", "cli")},
		{module + "/internal/repocheck/doccheck", m("internal/boundedfile")},
		{module + "/newthing", nil},
		{module + "/service/safebuild/diag", m("service/safebuild", "mcp/protocol")},
		{"example.com/other", m("harness/fakeagent")},
	}
	where := " has no tier: add it to places in internal/repocheck/importcheck/importcheck.go (fronts, services, core, wire or leaves; or beside them: test helpers, repository checks, proof, build)"
	want := []string{
		"agentproto (wire) imports internal/proc (leaves): wire may import only wire",
		"buildguard (core) imports mcp (fronts): core may import only core, wire, leaves",
		"cmd/buildguard (fronts) imports mcp: cmd/... may import only cli",
		"harness/conformance (proof) imports cli: cli may be imported by only cmd/...",
		"harness/conformance (proof) imports cmd/buildguard: cmd/buildguard may be imported by no package",
		"internal/repocheck/doccheck (repository checks) imports internal/boundedfile (leaves): repository checks may import no package of the module",
		"mcp (fronts) imports cli: cli may be imported by only cmd/...",
		"mcp (fronts) imports harness/fakeagent (proof): fronts may import only fronts, services, core, wire, leaves",
		"newthing" + where,
		"service/safebuild (services) imports cli: cli may be imported by only cmd/...",
		"service/safebuild/diag (services) imports mcp/protocol (fronts): services may import only services, core, wire, leaves",
	}
	if diff := cmp.Diff(want, Check(module, pkgs)); diff != "" {
		t.Errorf("Check (-want +got):\n%s", diff)
	}
}
