package agentproto

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	gotoken "go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"testing"
)

// TestResolveRunsDown: the endpoint goes through the package's files
// without coming back to one it left: endpoint.go selects and reads the
// port file, then Java's rules (javastring.go) parse the explicit port.
// The test follows the endpoint and every value made from it, as the
// calls are written, into each function of the package it is handed to
// (each walked once); a value returned by another package's function is
// no longer followed. Each call that hands one on enters the callee's
// file; no file may be entered twice apart.
func TestResolveRunsDown(t *testing.T) {
	t.Parallel()
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := gotoken.NewFileSet()
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if _, err := conf.Check(reflect.TypeFor[Endpoint]().PkgPath(), fset, files, info); err != nil {
		t.Fatal(err)
	}
	decls := map[types.Object]*ast.FuncDecl{}
	var start *ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				decls[info.Defs[fd.Name]] = fd
				if fd.Name.Name == "Resolve" && fd.Recv != nil && types.ExprString(fd.Recv.List[0].Type) == "Endpoint" {
					start = fd
				}
			}
		}
	}
	if start == nil {
		t.Fatal("the package declares no Endpoint.Resolve")
	}
	callee := func(call *ast.CallExpr) (*ast.FuncDecl, ast.Expr) {
		switch fun := ast.Unparen(call.Fun).(type) {
		case *ast.Ident:
			return decls[info.Uses[fun]], nil
		case *ast.SelectorExpr:
			return decls[info.Uses[fun.Sel]], fun.X
		}
		return nil, nil
	}
	held := map[types.Object]bool{} // the endpoint and the values made from it
	var holds func(e ast.Expr) bool
	holds = func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				found = found || held[info.Uses[n]]
			case *ast.CallExpr:
				if fd, recv := callee(n); fd != nil {
					found = found || (recv != nil && holds(recv)) || anyHolds(holds, n.Args)
				}
				return false
			}
			return !found
		})
		return found
	}
	hold := func(ids ...ast.Expr) {
		for _, e := range ids {
			if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
				held[info.Defs[id]], held[info.Uses[id]] = true, true
			}
		}
	}
	var trip []string // the files entered, in order
	passed := map[*ast.FuncDecl]bool{}
	var walk func(fd *ast.FuncDecl)
	walk = func(fd *ast.FuncDecl) {
		passed[fd] = true
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if anyHolds(holds, n.Rhs) {
					hold(n.Lhs...)
				}
			case *ast.RangeStmt:
				if holds(n.X) {
					hold(n.Key, n.Value)
				}
			case *ast.CallExpr:
				to, recv := callee(n)
				if to == nil || !((recv != nil && holds(recv)) || anyHolds(holds, n.Args)) {
					return true
				}
				if file := filepath.Base(fset.Position(to.Pos()).Filename); trip[len(trip)-1] != file {
					trip = append(trip, file)
				}
				if passed[to] {
					return true
				}
				if recv != nil && to.Recv != nil && holds(recv) {
					for _, name := range to.Recv.List[0].Names {
						hold(name)
					}
				}
				i := 0
				for _, field := range to.Type.Params.List {
					for _, name := range field.Names {
						if i < len(n.Args) && holds(n.Args[i]) {
							hold(name)
						}
						i++
					}
				}
				walk(to)
			}
			return true
		})
	}
	hold(start.Recv.List[0].Names[0])
	trip = append(trip, filepath.Base(fset.Position(start.Pos()).Filename))
	walk(start)
	seen := map[string]bool{}
	for _, file := range trip {
		if seen[file] {
			t.Errorf("the endpoint enters %s again: %v", file, trip)
			break
		}
		seen[file] = true
	}
	if len(trip) < 2 {
		t.Errorf("the endpoint's trip is %v; it should reach Java's rules for the port", trip)
	}
}

// anyHolds reports whether holds is true of one of es.
func anyHolds(holds func(ast.Expr) bool, es []ast.Expr) bool {
	for _, e := range es {
		if holds(e) {
			return true
		}
	}
	return false
}
