// Package doccheck checks that the repository cites its own contract and
// nothing else: every docs/<page>.md#<section> (and plain docs/<page>) in a Go
// file, a txtar transcript or a Markdown page names a page under docs/ and a
// section that page has, and no file points outside the repository (the
// brief's shared directory, an absolute path under the machine's work root)
// or cites a contract page without its docs/ path (a page name with a
// section sign, the brief's spec index, a bare decision number outside
// docs/).
//
// A section is the leading number of a heading ("## 7. …" is 7, "### 4.10 …"
// is 4.10) or a decision ("## D<n> — …" is D<n>), as docs/README.md explains.
// The map of docs/README.md (the tables after "## The map") is checked too:
// every backticked path there must exist (a glob must match, <name> stands
// for any part, a bare file name resolves next to the path before it), every
// transcript named in parentheses after a `…/*.txtar` path must exist, and
// every test, fuzz target, benchmark or example must be declared in the Go
// file or package the cell names before it (after a ";", anywhere in that
// package).
//
// The map is checked the other way too: every product Go file must be named
// in the code cell (the column headed "code") of some row, by its own path
// or a glob matching it, or by its package directory in a code cell that
// names no file of that package (`internal/proc` alone covers every file of
// internal/proc, but not of a directory below it). Product code is every
// .go file that is not a test (_test.go), outside testdata and hidden
// directories and outside what stands beside the product's tiers, as
// internal/repocheck/importcheck places them: the proof (harness/), the
// build (magefiles/), the test-only helpers (internal/testsupport/, and
// toolstest/ and mcptest/ next to their service or front) and the
// repository's checks (internal/repocheck/). A test cell names no code.
//
// The package owns the rules and the scan; its test applies them to the
// repository, so `go test ./...` fails on a dangling or outside citation,
// on a stale path or test name in the map, and on a product file no row of
// the map names.
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Problem is one bad reference: the file and line it is on, and what is wrong.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Scanned reports whether a file is scanned: Go sources, txtar transcripts
// and Markdown pages.
func Scanned(name string) bool {
	switch path.Ext(name) {
	case ".go", ".txtar", ".md":
		return true
	}
	return false
}

var (
	// heading is a Markdown heading whose first word is a section number
	// ("7.", "7.2", "4.10") or a decision ("D" and its number).
	heading = regexp.MustCompile(`^#{1,6}[ \t]+(D[0-9]+|[0-9]+(?:\.[0-9]+)*)\.?(?:[ \t]|$)`)
	// citation is docs/<page> with an optional #section.
	citation = regexp.MustCompile(`docs/([A-Za-z0-9_.-]+\.(?:md|json))(?:#(D[0-9]+|[0-9]+(?:\.[0-9]+)*))?`)
	// link is a relative Markdown link target inside docs/: (page.md#section).
	link = regexp.MustCompile(`\]\(([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9.-]*[A-Za-z0-9]))?\)`)
	// outside are references to files outside the repository.
	outside = []struct {
		re  *regexp.Regexp
		msg string
	}{
		{regexp.MustCompile(`\.\./share[d]`), "refers to the shared brief outside the repository; cite docs/<page>.md#<section>"},
		{regexp.MustCompile("(?:^|[\\s\"'`(=:,])/wor[k]/"), "names an absolute path under the machine's work root; cite a path inside the repository"},
	}
	// specPage is a contract page named without its docs/ directory.
	specPage = regexp.MustCompile(`(?:^|[^A-Za-z0-9_/.-])((?:agent-protocol|mcp-server|build-safety|decisions)\.md)`)
	// specREADME is the brief's index page.
	specREADME = regexp.MustCompile(`\bspec/READM[E]`)
	// bareDecision is a decision number without docs/decisions.md#.
	bareDecision = regexp.MustCompile(`(?:^|[^#A-Za-z0-9_])(D(?:1[0-6]|[1-9]))\b`)
	// sectionSign is a section sign after a page name.
	sectionSign = regexp.MustCompile(`\.md\)?\s*§`)
	// bareSection is a section sign with a number, which outside docs/ names
	// no page.
	bareSection = regexp.MustCompile(`§[0-9]`)
)

// Sections reads the section numbers of a contract page.
func Sections(page []byte) map[string]bool {
	secs := map[string]bool{}
	inFence := false
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			secs[m[1]] = true
		}
	}
	return secs
}

// Check scans every scanned file of fsys (a repository root) and returns the
// problems, sorted by file and line. Paths and directory names in skip (and
// every directory whose name starts with a dot, and node_modules) are left
// out.
func Check(fsys fs.FS, skip ...string) ([]Problem, error) {
	pages := map[string]map[string]bool{} // docs/<name> → sections (nil for non-Markdown)
	if entries, err := fs.ReadDir(fsys, "docs"); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			var secs map[string]bool
			if strings.HasSuffix(e.Name(), ".md") {
				b, err := fs.ReadFile(fsys, "docs/"+e.Name())
				if err != nil {
					return nil, err
				}
				secs = Sections(b)
			}
			pages[e.Name()] = secs
		}
	}
	skipped := map[string]bool{"node_modules": true}
	for _, s := range skip {
		skipped[s] = true
	}
	var problems []Problem
	err := walkFiles(fsys, skipped, func(name string) error {
		if !Scanned(name) {
			return nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		problems = append(problems, checkFile(name, b, pages)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	mapped, err := checkMap(fsys, skipped)
	if err != nil {
		return nil, err
	}
	problems = append(problems, mapped...)
	sort.SliceStable(problems, func(i, j int) bool {
		if problems[i].File != problems[j].File {
			return problems[i].File < problems[j].File
		}
		return problems[i].Line < problems[j].Line
	})
	return problems, nil
}

// walkFiles calls f with every file of fsys, leaving out the skipped
// paths and directory names, every directory whose name starts with a dot,
// and what lies below them.
func walkFiles(fsys fs.FS, skipped map[string]bool, f func(name string) error) error {
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name != "." && (strings.HasPrefix(d.Name(), ".") || skipped[d.Name()] || skipped[name]) {
				return fs.SkipDir
			}
			return nil
		}
		if skipped[name] {
			return nil
		}
		return f(name)
	})
}

// decisionsPage is the page of the decisions.
const decisionsPage = "docs/decisions.md"

// checkFile returns the problems of one file.
func checkFile(name string, b []byte, pages map[string]map[string]bool) []Problem {
	var problems []Problem
	inDocs := path.Dir(name) == "docs"
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		add := func(format string, args ...any) {
			problems = append(problems, Problem{File: name, Line: n, Msg: fmt.Sprintf(format, args...)})
		}
		for _, m := range citation.FindAllStringSubmatch(line, -1) {
			if msg := resolve(pages, m[1], m[2]); msg != "" {
				add("%s: %s", m[0], msg)
			}
		}
		if inDocs {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				if msg := resolve(pages, m[1], m[2]); msg != "" {
					add("link %s: %s", strings.TrimPrefix(m[0], "]"), msg)
				}
			}
		}
		for _, o := range outside {
			if o.re.MatchString(line) {
				add("%s", o.msg)
			}
		}
		if specREADME.MatchString(line) {
			add("cites the brief's spec index, outside the repository; cite docs/decisions.md#D<n>")
		}
		for _, m := range specPage.FindAllStringSubmatchIndex(line, -1) {
			page := line[m[2]:m[3]]
			if inDocs && m[2] >= 1 && (line[m[2]-1] == '[' || line[m[2]-1] == '(') {
				continue // a relative link between docs pages (target checked above) or its text
			}
			add("cites %s without docs/; cite docs/%s#<section>", page, page)
		}
		if sectionSign.MatchString(line) {
			add("cites a section with §; cite docs/<page>.md#<section>")
		} else if !inDocs && bareSection.MatchString(line) {
			add("cites a section with § and no page; cite docs/<page>.md#<section>")
		}
		for _, m := range bareDecision.FindAllStringSubmatch(line, -1) {
			switch {
			case !inDocs:
				add("bare decision %s; cite %s", m[1], decisionsPage+"#"+m[1])
			case !pages[path.Base(decisionsPage)][m[1]]:
				// On a contract page a decision may go by its name, but
				// it must be one.
				add("decision %s: %s has no section %s", m[1], decisionsPage, m[1])
			}
		}
	}
	return problems
}

// resolve checks that docs/page exists and has section; it returns what is
// wrong, or "".
func resolve(pages map[string]map[string]bool, page, section string) string {
	secs, ok := pages[page]
	if !ok {
		return "no such page under docs/"
	}
	if section == "" {
		return ""
	}
	if !strings.HasSuffix(page, ".md") {
		return "only Markdown pages have sections"
	}
	if !secs[section] {
		return fmt.Sprintf("docs/%s has no section %s (a heading starting with it)", page, section)
	}
	return ""
}
