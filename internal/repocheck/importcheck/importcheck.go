// Package importcheck holds the module's import layering and checks a set of
// packages against it, so no import arrow points upward.
//
// Every folder at the top of the module is one tier (the table in places),
// and the tiers' allowed arrows are written down once (the table in arrows).
// The five tiers of the product, top to bottom, and their folders:
//
//   - fronts: cmd/ (the command), cli/ (the command line) and mcp/ (the MCP
//     server and its transports) — they parse, word messages for their
//     users and call services;
//   - services: service/ — the safe build, the build queue, host-config
//     editing, the tasks, the build-output diagnostics and the tool service
//     both fronts present;
//   - core: buildguard/ — the hold session and supervision;
//   - wire: agentproto/ — the agent's status socket;
//   - leaves: internal/ and integrations/ — bounded file reads,
//     process-group inspection, file locks, the continuous cycle's channel,
//     the integration scripts — they import nothing of ours.
//
// Beside them stand the test-only helpers (internal/testsupport, and a
// service's own next to it, such as service/tools/toolstest), the
// repository's own checks (internal/repocheck), the proof (harness/) and
// the build (magefiles/): product code never imports any of them. A
// command (cmd/...) is imported by nobody and imports only the CLI, and the
// CLI is imported only by the command, so no other front reaches it
// through its tier.
//
// The rules cover the packages' own imports; their tests may import the
// harness and the test helpers, which is what those are for. The package
// owns the tables and the check; its test applies them to the module for
// every GOOS the release targets, so `go test ./...` and `go tool mage lint`
// fail on an upward import and on a package that has no place yet.
package importcheck

import (
	"fmt"
	"sort"
	"strings"
)

// Package is a package's import path and its direct imports, as `go list
// -json` reports them.
type Package struct {
	ImportPath string
	Imports    []string
}

// Tier is a named layer of the module.
type Tier string

// The tiers of the product, top to bottom, and the groups beside them.
const (
	Fronts   Tier = "fronts"
	Services Tier = "services"
	Core     Tier = "core"
	Wire     Tier = "wire"
	Leaves   Tier = "leaves"

	TestHelpers Tier = "test helpers"
	RepoChecks  Tier = "repository checks"
	Proof       Tier = "proof"
	Build       Tier = "build"
)

// arrows says which tiers a package of each tier may import. An arrow
// inside a tier is allowed where the tier lists itself: fronts compose
// fronts, services compose services; leaves import nothing of ours.
var arrows = map[Tier][]Tier{
	Fronts:   {Fronts, Services, Core, Wire, Leaves},
	Services: {Services, Core, Wire, Leaves},
	Core:     {Core, Wire, Leaves},
	Wire:     {Wire},
	Leaves:   nil,

	TestHelpers: {TestHelpers, Proof, Services, Core, Wire, Leaves},
	RepoChecks:  nil,
	Proof:       {Proof, TestHelpers, Fronts, Services, Core, Wire, Leaves},
	Build:       {Proof, TestHelpers, Fronts, Services, Core, Wire, Leaves},
}

// place puts the packages matching pattern (a module-relative path, or a
// tree: "harness/..." is harness and everything below it) in a tier.
type place struct {
	pattern string
	tier    Tier
	// sealed places are importable only by the places whose pattern is
	// listed here, whatever their tier allows: the command line is reached
	// through the command, never through the fronts' tier.
	sealed []string
	// only, when not nil, narrows what the place may import to the
	// packages matching these patterns: the command is one line of main.
	only []string
}

// places is where each package of the module stands; the first match wins.
// A new package goes here, in the tier its imports and its job give it.
var places = []place{
	{pattern: "cmd/...", tier: Fronts, sealed: []string{}, only: []string{"cli"}},
	{pattern: "cli/...", tier: Fronts, sealed: []string{"cmd/..."}},
	{pattern: "mcp/...", tier: Fronts},

	// The output-schema check the tool and server tests share: a test
	// helper of the tool service, next to it.
	{pattern: "service/tools/toolstest", tier: TestHelpers},
	{pattern: "service/...", tier: Services},

	{pattern: "buildguard/...", tier: Core},

	{pattern: "agentproto/...", tier: Wire},

	{pattern: "internal/testsupport/...", tier: TestHelpers},
	{pattern: "internal/repocheck/...", tier: RepoChecks},
	{pattern: "internal/...", tier: Leaves},
	// The integration scripts, and the package that embeds the cycle init
	// script the core applies to continuous builds.
	{pattern: "integrations/...", tier: Leaves},

	{pattern: "harness/...", tier: Proof},
	{pattern: "magefiles/...", tier: Build},
}

// match reports whether rel (a module-relative path) matches pattern.
func match(pattern, rel string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == tree || strings.HasPrefix(rel, tree+"/")
	}
	return rel == pattern
}

// placeOf returns the place of a module-relative package path.
func placeOf(rel string) (place, bool) {
	for _, p := range places {
		if match(p.pattern, rel) {
			return p, true
		}
	}
	return place{}, false
}

// noPlace is the problem of a package that has no tier yet.
func noPlace(rel string) string {
	return fmt.Sprintf("%s has no tier: add it to places in internal/repocheck/importcheck/importcheck.go "+
		"(fronts, services, core, wire or leaves; or beside them: test helpers, repository checks, proof, build)", rel)
}

// Check returns one problem per import of a module package that the layering
// does not allow, and one per package that has no place, sorted. module is
// the module path; imports outside it are not checked.
func Check(module string, pkgs []Package) []string {
	rel := func(p string) (string, bool) {
		return strings.CutPrefix(p, module+"/")
	}
	var problems []string
	unplaced := map[string]bool{}
	for _, p := range pkgs {
		from, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		pf, ok := placeOf(from)
		if !ok {
			unplaced[from] = true
			continue
		}
		for _, imp := range p.Imports {
			to, ok := rel(imp)
			if !ok {
				continue
			}
			pt, ok := placeOf(to)
			if !ok {
				unplaced[to] = true
				continue
			}
			if msg := forbidden(from, pf, to, pt); msg != "" {
				problems = append(problems, msg)
			}
		}
	}
	for p := range unplaced {
		problems = append(problems, noPlace(p))
	}
	sort.Strings(problems)
	return problems
}

// forbidden returns why from (at place pf) may not import to (at pt), or "".
func forbidden(from string, pf place, to string, pt place) string {
	if pt.sealed != nil {
		for _, s := range pt.sealed {
			if match(s, from) {
				return ""
			}
		}
		who := "no package"
		if len(pt.sealed) > 0 {
			who = "only " + strings.Join(pt.sealed, ", ")
		}
		return fmt.Sprintf("%s (%s) imports %s: %s may be imported by %s", from, pf.tier, to, to, who)
	}
	if pf.only != nil {
		for _, o := range pf.only {
			if match(o, to) {
				return ""
			}
		}
		return fmt.Sprintf("%s (%s) imports %s: %s may import only %s", from, pf.tier, to, pf.pattern, strings.Join(pf.only, ", "))
	}
	for _, t := range arrows[pf.tier] {
		if t == pt.tier {
			return ""
		}
	}
	return fmt.Sprintf("%s (%s) imports %s (%s): %s may import %s", from, pf.tier, to, pt.tier, pf.tier, mayText(pf.tier))
}

func mayText(t Tier) string {
	may := arrows[t]
	if len(may) == 0 {
		return "no package of the module"
	}
	names := make([]string, len(may))
	for i, m := range may {
		names[i] = string(m)
	}
	return "only " + strings.Join(names, ", ")
}
