package doccheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// MapPage is the page whose map (the tables after its "## The map" heading)
// names the code and tests of each capability.
const MapPage = "docs/README.md"

var (
	// backticked is one `code span`.
	backticked = regexp.MustCompile("`([^`]*)`")
	// testName is a test, fuzz target, benchmark or example, optionally a
	// prefix ending in * ("TestRun*").
	testName = regexp.MustCompile(`\b((?:Test|Fuzz|Benchmark|Example)[A-Z0-9_][A-Za-z0-9_]*\*?)`)
	// goFunc is the declaration of a test function in a Go file.
	goFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)[A-Za-z0-9_]*)\(`)
	// fileExt is the ending of a file named by itself in the map.
	fileExt = regexp.MustCompile(`\.(?:go|txtar|md|json|gradle|java|cmd|ts)$`)
	// separator is the row under a table's header.
	separator = regexp.MustCompile(`^\|[ \t:|-]+\|$`)
	// transcriptName is a transcript named without its directory and
	// ending (`usage` after `.../wrap/*.txtar`).
	transcriptName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

// mapScope is where a name in a map cell is looked up: the Go file or
// package of the last path before it (code), and the directory a relative
// file name resolves in (dir), with the transcript directory when the last
// path was a set of transcripts.
type mapScope struct {
	code        string // a Go file or a package directory; "" when none yet
	codeIsFile  bool
	dir         string   // where relative names resolve; "" when none yet
	transcripts string   // the directory of a `.../*.txtar` path, else ""
	widened     bool     // after a ";": names are looked up in the whole package
	files       []string // every file a path in the cell matched
	dirs        []string // every directory a path in the cell matched
}

// checkMap checks every backticked path, transcript name and test name in
// the map of MapPage: paths (and globs, with <name> standing for any part)
// must match a file or directory, a test name must be declared in the Go
// file or package named before it in its cell. Then it checks the other
// way: every product Go file (see isProduct) must be named by a code cell
// (see unnamed).
func checkMap(fsys fs.FS, skipped map[string]bool) ([]Problem, error) {
	page, err := fs.ReadFile(fsys, MapPage)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var problems []Problem
	funcs := map[string][]string{} // Go file → its test functions
	named := map[string]bool{}     // files a code cell names, and packages it names alone
	inMap := false
	codeCol := -1     // the column headed "code" in the current table
	var prev []string // the row before, the header when a separator follows
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inMap = strings.HasPrefix(line, "## The map")
			continue
		}
		if !inMap || !strings.HasPrefix(line, "|") {
			continue
		}
		add := func(format string, args ...any) {
			problems = append(problems, Problem{File: MapPage, Line: n, Msg: fmt.Sprintf(format, args...)})
		}
		row := cells(line)
		if separator.MatchString(line) {
			codeCol = slices.IndexFunc(prev, func(c string) bool { return strings.TrimSpace(c) == "code" })
			continue
		}
		prev = row
		for i, cell := range row {
			scope := checkCell(fsys, cell, funcs, add)
			if i == codeCol {
				nameCovered(scope, named)
			}
		}
	}
	more, err := unnamed(fsys, skipped, named)
	if err != nil {
		return nil, err
	}
	return append(problems, more...), nil
}

// nameCovered adds to named what one code cell covers: every file a path
// (or glob) in it matched, and every package directory it names without
// naming any file of that directory, which then covers all its files.
func nameCovered(sc mapScope, named map[string]bool) {
	hasFile := map[string]bool{}
	for _, f := range sc.files {
		named[f] = true
		hasFile[path.Dir(f)] = true
	}
	for _, d := range sc.dirs {
		if !hasFile[d] {
			named[d+"/"] = true
		}
	}
}

// notProduct are the trees whose Go files are not product code: the proof
// (harness), the build (magefiles), the test-only helpers and the
// repository's checks, as internal/repocheck/importcheck places them.
var notProduct = []string{"harness", "magefiles", "internal/testsupport", "internal/repocheck"}

// testHelperDirs are the directories of the test helpers that stand next
// to their service: service/tools/toolstest.
var testHelperDirs = map[string]bool{"toolstest": true}

// isProduct reports whether the Go file name is product code: a .go file
// that is not a test, outside testdata, the test helpers of testHelperDirs
// and the trees of notProduct.
func isProduct(name string) bool {
	if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
		return false
	}
	for _, part := range strings.Split(path.Dir(name), "/") {
		if part == "testdata" || testHelperDirs[part] {
			return false
		}
	}
	for _, d := range notProduct {
		if strings.HasPrefix(name, d+"/") {
			return false
		}
	}
	return true
}

// unnamed returns a problem for every product Go file of fsys that no code
// cell of the map names, by its own path (or a glob matching it) or by its
// package directory in a cell that names no file of that package. Hidden
// directories, node_modules and the skipped paths are left out.
func unnamed(fsys fs.FS, skipped, named map[string]bool) ([]Problem, error) {
	var problems []Problem
	err := walkFiles(fsys, skipped, func(name string) error {
		if !isProduct(name) || named[name] || named[path.Dir(name)+"/"] {
			return nil
		}
		problems = append(problems, Problem{File: name, Line: 1, Msg: "no row of the map in " + MapPage +
			" names this product file; add it to the code cell of its capability, or name its package there without naming any of its files"})
		return nil
	})
	return problems, err
}

// cells splits a table row into its cells; a | inside a code span does not
// split.
func cells(row string) []string {
	var out []string
	var cur strings.Builder
	code := false
	for _, r := range strings.TrimSpace(row) {
		switch {
		case r == '`':
			code = !code
		case r == '|' && !code:
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	out = append(out, cur.String())
	if len(out) > 2 {
		out = out[1 : len(out)-1] // the empty text before the first and after the last |
	}
	return out
}

// checkCell checks one cell, reading its tokens in order, and returns its
// scope at the end, with every file and directory its paths matched.
func checkCell(fsys fs.FS, cell string, funcs map[string][]string, add func(string, ...any)) mapScope {
	var sc mapScope
	depth := 0 // parentheses: a path inside them does not change where test names are looked up
	rest := cell
	for rest != "" {
		loc := backticked.FindStringIndex(rest)
		prose := rest
		if loc != nil {
			prose = rest[:loc[0]]
		}
		for _, part := range splitKeep(prose) {
			switch part {
			case "(":
				depth++
				continue
			case ")":
				depth = max(0, depth-1)
				continue
			case ";":
				sc.widened = true
				continue
			}
			for _, m := range testName.FindAllString(part, -1) {
				checkTest(fsys, sc, m, funcs, add)
			}
		}
		if loc == nil {
			break
		}
		checkSpan(fsys, &sc, depth, rest[loc[0]+1:loc[1]-1], add)
		rest = rest[loc[1]:]
	}
	return sc
}

// splitKeep splits prose at parentheses and semicolons, keeping them.
func splitKeep(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if r == '(' || r == ')' || r == ';' {
			out = append(out, s[start:i], string(r))
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// checkSpan checks one code span and moves the scope to the path it names.
func checkSpan(fsys fs.FS, sc *mapScope, depth int, span string, add func(string, ...any)) {
	switch {
	case strings.ContainsAny(span, " \t"):
		return // a command or a phrase
	case sc.transcripts != "" && depth > 0 && transcriptName.MatchString(span):
		if !exists(fsys, path.Join(sc.transcripts, span+".txtar")) {
			add("`%s`: no transcript %s/%s.txtar", span, sc.transcripts, span)
		}
		return
	case !strings.Contains(span, "/") && !fileExt.MatchString(span) && !isDir(fsys, span):
		return // a name, a flag, a value (or a package at the root: `buildguard`)
	case strings.HasPrefix(span, "./") || strings.HasPrefix(span, "../") || strings.HasPrefix(span, "/"):
		return
	case rpcMethod.MatchString(span) && !looksRooted(fsys, span):
		return // tools/list, notifications/cancelled
	}
	p := strings.TrimSuffix(span, "/")
	if !strings.Contains(span, "/") && isDir(fsys, p) {
		// a package at the root
	} else if !strings.Contains(span, "/") || (sc.dir != "" && !looksRooted(fsys, p)) {
		if sc.dir == "" {
			add("`%s`: a file name with no path before it in its cell; name it from the repository root", span)
			return
		}
		p = path.Join(sc.dir, p)
	}
	glob := templateName.ReplaceAllString(p, "*")
	matches, _ := fs.Glob(fsys, glob)
	if len(matches) == 0 {
		add("`%s`: no such file or directory (%s)", span, glob)
		return
	}
	isDir := false
	if fi, err := fs.Stat(fsys, matches[0]); err == nil && fi.IsDir() {
		isDir = true
	}
	for _, m := range matches {
		if fi, err := fs.Stat(fsys, m); err == nil && fi.IsDir() {
			sc.dirs = append(sc.dirs, m)
		} else {
			sc.files = append(sc.files, m)
		}
	}
	sc.transcripts = ""
	if strings.HasSuffix(glob, "*.txtar") {
		sc.transcripts = path.Dir(glob)
	}
	if isDir {
		sc.dir = p
	} else {
		sc.dir = path.Dir(p)
	}
	if depth > 0 || glob != p {
		return
	}
	switch {
	case strings.HasSuffix(p, ".go"):
		sc.code, sc.codeIsFile, sc.widened = p, true, false
	case isDir && hasGo(fsys, p):
		sc.code, sc.codeIsFile, sc.widened = p, false, false
	}
}

// rpcMethod is the shape of a JSON-RPC method name.
var rpcMethod = regexp.MustCompile(`^[a-z]+/[a-z][A-Za-z]*$`)

// templateName is a part of a path the map leaves open: mcp/tool_<name>.go.
var templateName = regexp.MustCompile(`<[a-z]+>`)

// looksRooted reports whether p, which has a slash, names something from
// the repository root rather than from the cell's current directory.
func looksRooted(fsys fs.FS, p string) bool {
	first, _, _ := strings.Cut(p, "/")
	_, err := fs.Stat(fsys, first)
	return err == nil
}

// checkTest checks that a test name is declared where the cell's scope says.
func checkTest(fsys fs.FS, sc mapScope, name string, funcs map[string][]string, add func(string, ...any)) {
	if sc.code == "" {
		add("%s: no Go file or package named before it in its cell", name)
		return
	}
	var files []string
	where := sc.code
	if sc.codeIsFile && !sc.widened {
		files = []string{sc.code}
	} else {
		dir := sc.code
		if sc.codeIsFile {
			dir = path.Dir(sc.code)
		}
		where = dir
		files, _ = fs.Glob(fsys, path.Join(dir, "*.go"))
	}
	prefix, isPrefix := strings.CutSuffix(name, "*")
	for _, f := range files {
		for _, fn := range testFuncs(fsys, f, funcs) {
			if fn == name || (isPrefix && strings.HasPrefix(fn, prefix)) {
				return
			}
		}
	}
	add("%s: not declared in %s", name, where)
}

// testFuncs returns the test functions a Go file declares, read once.
func testFuncs(fsys fs.FS, file string, funcs map[string][]string) []string {
	if fns, ok := funcs[file]; ok {
		return fns
	}
	b, _ := fs.ReadFile(fsys, file)
	var fns []string
	for _, m := range goFunc.FindAllSubmatch(b, -1) {
		fns = append(fns, string(m[1]))
	}
	funcs[file] = fns
	return fns
}

func exists(fsys fs.FS, name string) bool {
	_, err := fs.Stat(fsys, name)
	return err == nil
}

func isDir(fsys fs.FS, name string) bool {
	fi, err := fs.Stat(fsys, name)
	return err == nil && fi.IsDir()
}

func hasGo(fsys fs.FS, dir string) bool {
	m, _ := fs.Glob(fsys, path.Join(dir, "*.go"))
	return len(m) > 0
}
