package doccheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
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
	dir         string // where relative names resolve; "" when none yet
	transcripts string // the directory of a `.../*.txtar` path, else ""
	widened     bool   // after a ";": names are looked up in the whole package
}

// checkMap checks every backticked path, transcript name and test name in
// the map of MapPage: paths (and globs, with <name> standing for any part)
// must match a file or directory, a test name must be declared in the Go
// file or package named before it in its cell.
func checkMap(fsys fs.FS) ([]Problem, error) {
	page, err := fs.ReadFile(fsys, MapPage)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var problems []Problem
	funcs := map[string][]string{} // Go file → its test functions
	inMap := false
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
		for _, cell := range cells(line) {
			checkCell(fsys, cell, funcs, add)
		}
	}
	return problems, nil
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

// checkCell checks one cell, reading its tokens in order.
func checkCell(fsys fs.FS, cell string, funcs map[string][]string, add func(string, ...any)) {
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
