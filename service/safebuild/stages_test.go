package safebuild

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// stages are the files of Run's stages, in the order Run calls them.
var stages = []string{"admit.go", "run.go", "prove.go", "answer.go"}

// TestStagesNeverCallBack: each stage of a safe build hands its result to
// the next, and no function of a stage's file calls a function or method
// declared in the file of an earlier stage; Run alone, which calls the
// stages, is exempt. A callee is known by its name when that name is
// unexported and declared once in the package: no other package's method
// can bear it.
func TestStagesNeverCallBack(t *testing.T) {
	fset := token.NewFileSet()
	declared := map[string]string{} // unexported name -> its file; "" when declared twice
	parsed := map[string]*ast.File{}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || ast.IsExported(fd.Name.Name) {
				continue
			}
			if _, twice := declared[fd.Name.Name]; twice {
				declared[fd.Name.Name] = ""
			} else {
				declared[fd.Name.Name] = name
			}
		}
	}
	stage := map[string]int{}
	for i, name := range stages {
		if parsed[name] == nil {
			t.Fatalf("the stage file %s is missing", name)
		}
		stage[name] = i
	}
	for i, name := range stages {
		for _, d := range parsed[name].Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || (fd.Name.Name == "Run" && fd.Recv != nil) {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var callee string
				switch fun := call.Fun.(type) {
				case *ast.Ident:
					callee = fun.Name
				case *ast.SelectorExpr:
					callee = fun.Sel.Name
				}
				if j, ok := stage[declared[callee]]; ok && j < i {
					t.Errorf("%s: %s (stage %s) calls %s, declared in %s, an earlier stage", fset.Position(call.Pos()), fd.Name.Name, name, callee, stages[j])
				}
				return true
			})
		}
	}
}

// TestReadyOpensTheStateDirOnce: a build that has its turn takes its
// owner and its log from one opening of the project's state directory
// (docs/safe-build.md#9): the calls of the run stage's ready reach
// openStateDir once, counted through every function of the package they
// call.
func TestReadyOpensTheStateDirOnce(t *testing.T) {
	bodies := map[string][]*ast.BlockStmt{} // function or method name -> its bodies, one per file declaring it
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				bodies[fd.Name.Name] = append(bodies[fd.Name.Name], fd.Body)
			}
		}
	}
	var opens func(name string, depth int) int
	opens = func(name string, depth int) int {
		if name == "openStateDir" {
			return 1
		}
		most := 0
		for _, body := range bodies[name] {
			n := 0
			ast.Inspect(body, func(node ast.Node) bool {
				call, ok := node.(*ast.CallExpr)
				if !ok {
					return true
				}
				var callee string
				switch fun := call.Fun.(type) {
				case *ast.Ident:
					callee = fun.Name
				case *ast.SelectorExpr:
					callee = fun.Sel.Name
				}
				if callee != name && depth < 20 {
					n += opens(callee, depth+1)
				}
				return true
			})
			most = max(most, n)
		}
		return most
	}
	if len(bodies["ready"]) != 1 {
		t.Fatalf("ready is declared %d times, want once", len(bodies["ready"]))
	}
	if n := opens("ready", 0); n != 1 {
		t.Errorf("a build that has its turn opens its state directory %d times, want once", n)
	}
}

// admissionTrip are the functions that a build's request goes through
// before its command starts, by the stage file that declares them: the
// admission until the turn, then the run stage's readying.
var admissionTrip = map[string][]string{
	"admit.go": {"admit", "wait", "coalesceKey"},
	"run.go":   {"ready", "guardConfig"},
}

// TestAdmissionRunsDown: the way to a build's start reads top-down. In
// each function of its trip the calls, in the order they are written, go
// from the functions of the function's own file to the package's other
// files and the services, then to the core, then to the wire and the
// leaves, and never back up.
func TestAdmissionRunsDown(t *testing.T) {
	t.Parallel()
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	stageFiles := map[string]*ast.File{}
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		if admissionTrip[name] != nil {
			stageFiles[name] = f
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	self := reflect.TypeFor[Builder]().PkgPath()
	if _, err := conf.Check(self, fset, files, info); err != nil {
		t.Fatal(err)
	}
	module := strings.TrimSuffix(self, "/service/safebuild")
	// tier is how far down a callee of a function of file own is; -1 for
	// a call the rule leaves alone (the standard library, other modules,
	// function values).
	tier := func(own string, call *ast.CallExpr) (int, string) {
		var id *ast.Ident
		switch fun := ast.Unparen(call.Fun).(type) {
		case *ast.Ident:
			id = fun
		case *ast.SelectorExpr:
			id = fun.Sel
		default:
			return -1, ""
		}
		fn, ok := info.Uses[id].(*types.Func)
		if !ok || fn.Pkg() == nil {
			return -1, ""
		}
		path := fn.Pkg().Path()
		switch {
		case path == self && filepath.Base(fset.Position(fn.Pos()).Filename) == own:
			return 0, fn.Name()
		case path == self, strings.HasPrefix(path, module+"/service/"):
			return 1, fn.Name()
		case path == module+"/buildguard":
			return 2, fn.Name()
		case path == module+"/agentproto":
			return 3, fn.Name()
		case strings.HasPrefix(path, module+"/internal/"):
			return 4, fn.Name()
		}
		return -1, ""
	}
	for file, names := range admissionTrip {
		f := stageFiles[file]
		if f == nil {
			t.Errorf("the package has no %s", file)
			continue
		}
		trip := map[string]bool{}
		for _, name := range names {
			trip[name] = true
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !trip[fd.Name.Name] {
				continue
			}
			delete(trip, fd.Name.Name)
			lowest, after := 0, ""
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if tr, name := tier(file, call); tr >= 0 {
					if tr < lowest {
						t.Errorf("%s: %s calls %s after %s, which is further down", fset.Position(call.Pos()), fd.Name.Name, name, after)
					}
					if tr > lowest {
						lowest, after = tr, name
					}
				}
				return true
			})
		}
		for name := range trip {
			t.Errorf("%s declares no %s", file, name)
		}
	}
}

// TestOneNamePerType: each type of the package has one name, no alias,
// so that a reader follows a value's methods by the name it is declared
// with, whichever system's file declares them.
func TestOneNamePerType(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Assign.IsValid() {
				t.Errorf("%s: %s is a second name of a type", fset.Position(ts.Pos()), ts.Name.Name)
			}
			return true
		})
	}
}

// stateDirSystems are the files of the state directory's primitives, one
// per system; statedir.go holds what every system shares.
var stateDirSystems = []string{"statedir_unix.go", "statedir_other.go"}

// stateDirShared returns the functions declared in statedir.go, each
// saying whether it is a leaf: it calls no function declared there.
func stateDirShared(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "statedir.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	leaf := map[string]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			leaf[fd.Name.Name] = true
		}
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok {
					if _, shared := leaf[id.Name]; shared {
						leaf[fd.Name.Name] = false
					}
				}
			}
			return true
		})
	}
	return leaf
}

// TestStateDirSystemsCallNoBack: each system's state directory file is
// the bottom of the state directory's trip. Its functions call back into
// statedir.go only for a leaf there, a function that calls nothing of
// statedir.go: the check of what buildguard made (checkOwn). Both
// systems' files are read, whichever system runs the test.
func TestStateDirSystemsCallNoBack(t *testing.T) {
	leaf := stateDirShared(t)
	fset := token.NewFileSet()
	for _, name := range stateDirSystems {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if id, ok := call.Fun.(*ast.Ident); ok {
					if isLeaf, shared := leaf[id.Name]; shared && !isLeaf {
						t.Errorf("%s: %s calls back %s, declared in statedir.go, which calls on there", fset.Position(call.Pos()), fd.Name.Name, id.Name)
					}
				}
				return true
			})
		}
	}
}

// TestOwnerFileRunsDown: the owner file is read, and created when
// missing, by code that hands the opened state directory down to the
// system's primitives and does not come back: in ownerIn and readOwner,
// once a call of a system's state directory file is written, no call
// follows into a function of statedir.go that calls on there. The
// check of what buildguard made (checkOwn) is such a leaf.
func TestOwnerFileRunsDown(t *testing.T) {
	leaf := stateDirShared(t)
	system := map[string]bool{} // functions and methods declared in a system's file
	for _, name := range stateDirSystems {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				system[fd.Name.Name] = true
			}
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "statedir.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	trip := map[string]bool{"ownerIn": true, "readOwner": true}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || !trip[fd.Name.Name] {
			continue
		}
		delete(trip, fd.Name.Name)
		down := ""
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				if isLeaf, shared := leaf[fun.Name]; shared && !isLeaf && down != "" {
					t.Errorf("%s: %s calls %s, declared in statedir.go, after the system's %s", fset.Position(call.Pos()), fd.Name.Name, fun.Name, down)
				}
				if system[fun.Name] && down == "" {
					down = fun.Name
				}
			case *ast.SelectorExpr:
				if system[fun.Sel.Name] && down == "" {
					down = fun.Sel.Name
				}
			}
			return true
		})
	}
	for name := range trip {
		t.Errorf("statedir.go declares no %s", name)
	}
}
