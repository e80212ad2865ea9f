// Package importcheck holds the module's import layering and checks a set of
// packages against it, so no import arrow points upward:
//
//   - agentproto (the wire) and integrations import no package of ours;
//   - buildguard (the core) imports only agentproto and internal packages;
//   - internal packages import agentproto, the core and each other, never a
//     front (internal/cli, cmd);
//   - mcp imports agentproto, the core and internal packages;
//   - internal/cli (the CLI front) imports those and mcp;
//   - cmd/buildguard imports internal/cli only;
//   - harness (everything that exists to prove) imports product packages and
//     itself, never a front; magefiles imports the harness and the product;
//   - nothing imports harness from product code, and nothing imports
//     magefiles or cmd.
//
// The rules cover the packages' own imports; their tests may import the
// harness, which is what it is for. The package owns the rules and the check;
// its test applies them to the module for every GOOS the release targets, so
// `go test ./...` and `go tool mage lint` fail on an upward import.
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

// rule says which of the module's packages the packages matching from may
// import. A pattern is a path relative to the module ("mcp") or a tree
// ("internal/..." is internal/ and everything below it).
type rule struct {
	from string
	may  []string
}

// layering is the module's rule table, first match wins.
func layering() []rule {
	return []rule{
		{"agentproto", nil},
		{"integrations", nil},
		{"buildguard", []string{"agentproto", "internal/..."}},
		{"cmd/buildguard", []string{"internal/cli"}},
		{"internal/cli", []string{"agentproto", "buildguard", "mcp", "internal/..."}},
		{"internal/...", []string{"agentproto", "buildguard", "internal/..."}},
		{"mcp", []string{"agentproto", "buildguard", "internal/..."}},
		{"harness/...", []string{"agentproto", "buildguard", "mcp", "internal/...", "harness/..."}},
		{"magefiles", []string{"agentproto", "buildguard", "mcp", "internal/...", "harness/..."}},
	}
}

// fronts are importable only where a rule names them exactly, never through
// a tree pattern: "internal/..." does not let a package import internal/cli.
func fronts() []string { return []string{"internal/cli", "cmd/..."} }

// match reports whether rel (a module-relative path) matches pattern.
func match(pattern, rel string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == tree || strings.HasPrefix(rel, tree+"/")
	}
	return rel == pattern
}

func isFront(rel string) bool {
	for _, f := range fronts() {
		if match(f, rel) {
			return true
		}
	}
	return false
}

// Check returns one problem per import of a module package that the layering
// does not allow, and one per package no rule covers, sorted. module is the
// module path; imports outside it are not checked.
func Check(module string, pkgs []Package) []string {
	rel := func(p string) (string, bool) {
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	var problems []string
	for _, p := range pkgs {
		from, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		r, ok := ruleFor(from)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no layering rule covers it; add one to internal/repocheck/importcheck", from))
			continue
		}
		for _, imp := range p.Imports {
			to, ok := rel(imp)
			if !ok || allowed(r, to) {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s imports %s: %s may import %s", from, to, r.from, mayText(r)))
		}
	}
	sort.Strings(problems)
	return problems
}

func ruleFor(pkg string) (rule, bool) {
	for _, r := range layering() {
		if match(r.from, pkg) {
			return r, true
		}
	}
	return rule{}, false
}

func allowed(r rule, to string) bool {
	for _, m := range r.may {
		if isFront(to) && m != to {
			continue
		}
		if match(m, to) {
			return true
		}
	}
	return false
}

func mayText(r rule) string {
	if len(r.may) == 0 {
		return "no package of the module"
	}
	return "only " + strings.Join(r.may, ", ")
}
