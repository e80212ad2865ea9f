package mcptest

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/service/safebuild"
	"github.com/buildguard/buildguard/service/tools"
)

// BuildProject is a project with a .buildguard.json of shell-script builds,
// a watched output directory, and a fake agent that, on an accepted BUILD
// ok, captures the class files there as its watcher would have.
type BuildProject struct {
	Dir, Out string
	Agent    *fakeagent.Server
	Svc      *tools.Service
}

// The builds of the tests (shell scripts, for unix): one that compiles a
// class while printing, one that fails, one that runs until it is stopped
// (recording its pid and its child's in pids).
const (
	OKBuild   = `for i in 1 2 3 4 5; do echo "compiling step $i"; sleep 0.05; done; mkdir -p out/app; printf 'bytes-%s' "$$" > out/app/Main.class; echo BUILD SUCCESSFUL`
	FailBuild = `echo "B.java:3: error: cannot find symbol missingSymbol" >&2; exit 1`
	HangBuild = `sleep 300 & echo "$$ $!" > pids.tmp; mv pids.tmp pids; echo compiling forever; wait`
)

// NewBuildProject makes a project in a temporary directory whose builds run
// the named scripts with sh -c; "ok" is the default build.
func NewBuildProject(t testing.TB, builds map[string]string) *BuildProject {
	t.Helper()
	p := &BuildProject{Dir: t.TempDir()}
	p.Out = filepath.Join(p.Dir, "out")
	if err := os.MkdirAll(p.Out, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{}
	for name, script := range builds {
		cfg[name] = map[string]any{"command": []string{"sh", "-c", script}}
	}
	data, _ := json.Marshal(map[string]any{"builds": cfg, "defaultBuild": "ok"})
	if err := os.WriteFile(filepath.Join(p.Dir, safebuild.ConfigFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var srv *fakeagent.Server
	p.Agent = fakeagent.NewServer(t,
		fakeagent.WithHeartbeat(-1),
		fakeagent.WithPortFile(filepath.Join(p.Dir, ".reclazz", "agent.port")),
		fakeagent.WithDoctor(fakeagent.Evidence{WatchedDirectories: []string{p.Out}}),
		fakeagent.WithAcceptance(func(context.Context, string) fakeagent.Outcome {
			mu.Lock()
			s := srv
			mu.Unlock()
			filepath.WalkDir(p.Out, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(path, ".class") {
					rel, _ := filepath.Rel(p.Out, path)
					data, _ := os.ReadFile(path)
					s.AddPendingClass(strings.ReplaceAll(strings.TrimSuffix(rel, ".class"), "/", "."), path, data)
				}
				return nil
			})
			return fakeagent.AcceptSuccess
		}))
	mu.Lock()
	srv = p.Agent
	mu.Unlock()
	p.Svc = tools.NewService(tools.Deps{Base: p.Dir, BuildGrace: 500 * time.Millisecond, VerifyWait: 5 * time.Second})
	return p
}
