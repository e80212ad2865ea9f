//go:build unix

package stdio_test

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

// buildProject is a project with a .buildguard.json of shell-script builds,
// a watched output directory, and a fake agent that, on an accepted BUILD
// ok, captures the class files there as its watcher would have.
type buildProject struct {
	dir, out string
	agent    *fakeagent.Server
	svc      *tools.Service
}

func newBuildProject(t testing.TB, builds map[string]string) *buildProject {
	t.Helper()
	p := &buildProject{dir: t.TempDir()}
	p.out = filepath.Join(p.dir, "out")
	os.MkdirAll(p.out, 0o755)
	cfg := map[string]any{}
	for name, script := range builds {
		cfg[name] = map[string]any{"command": []string{"sh", "-c", script}}
	}
	data, _ := json.Marshal(map[string]any{"builds": cfg, "defaultBuild": "ok"})
	if err := os.WriteFile(filepath.Join(p.dir, safebuild.ConfigFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var srv *fakeagent.Server
	p.agent = fakeagent.NewServer(t,
		fakeagent.WithHeartbeat(-1),
		fakeagent.WithPortFile(filepath.Join(p.dir, ".reclazz", "agent.port")),
		fakeagent.WithDoctor(fakeagent.Evidence{WatchedDirectories: []string{p.out}}),
		fakeagent.WithAcceptance(func(context.Context, string) fakeagent.Outcome {
			mu.Lock()
			s := srv
			mu.Unlock()
			filepath.WalkDir(p.out, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(path, ".class") {
					rel, _ := filepath.Rel(p.out, path)
					data, _ := os.ReadFile(path)
					s.AddPendingClass(strings.ReplaceAll(strings.TrimSuffix(rel, ".class"), "/", "."), path, data)
				}
				return nil
			})
			return fakeagent.AcceptSuccess
		}))
	mu.Lock()
	srv = p.agent
	mu.Unlock()
	p.svc = tools.NewService(tools.Deps{Base: p.dir, BuildGrace: 500 * time.Millisecond, VerifyWait: 5 * time.Second})
	return p
}

// hangBuild runs until it is stopped, recording its pid and its child's in
// pids.
const hangBuild = `sleep 300 & echo "$$ $!" > pids.tmp; mv pids.tmp pids; echo compiling forever; wait`
