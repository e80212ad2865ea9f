// Package funclen keeps the product's functions short enough to read in
// one go: a function of product code longer than Max lines must say why in
// its doc comment, with the words "longer than 80 lines because".
//
// Product code is every Go file outside tests, testdata, the proof
// (harness), the build (magefiles), the test-only helpers
// (internal/testsupport, …/toolstest) and the repository's checks
// (internal/repocheck), as internal/repocheck/importcheck places them. The
// package owns the rule and the scan; its test applies them to the
// repository, so `go test ./...` fails on a long function with no reason.
package funclen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Max is the most lines a product function may span, from its func line to
// its closing brace, without a reason.
const Max = 80

// Reason is the phrase a long function's doc comment must hold.
const Reason = "longer than 80 lines because"

// notProduct are the folders whose code is not product code.
var notProduct = []string{"harness", "magefiles", "internal/testsupport", "internal/repocheck"}

// isProduct reports whether the Go file name is product code.
func isProduct(name string) bool {
	if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
		return false
	}
	for _, part := range strings.Split(path.Dir(name), "/") {
		if part == "testdata" || part == "toolstest" || strings.HasPrefix(part, ".") || part == "node_modules" {
			return false
		}
	}
	for _, d := range notProduct {
		if name == d || strings.HasPrefix(name, d+"/") {
			return false
		}
	}
	return true
}

// Check returns one problem per product function of fsys (a repository
// root) longer than Max lines whose doc comment gives no reason, sorted.
func Check(fsys fs.FS) ([]string, error) {
	var problems []string
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isProduct(name) {
			return err
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", name, err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			if n := end - start + 1; n > Max && !strings.Contains(fd.Doc.Text(), Reason) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s is %d lines: split it, or say in its doc comment why it is %s …", name, start, funcName(fd), n, Reason))
			}
		}
		return nil
	})
	sort.Strings(problems)
	return problems, err
}

// funcName is Name or Recv.Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
