package conformance_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/conformance"
	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/harness/refagent"
)

// TestFakeAgent holds the in-process fake agent to the protocol.
func TestFakeAgent(t *testing.T) {
	t.Parallel()
	conformance.Run(t, func(t *testing.T) conformance.Agent {
		// Frequent heartbeats: every case must tolerate them between replies.
		srv := fakeagent.NewServer(t, fakeagent.WithHeartbeat(fakeHeartbeat))
		return &fakeAgent{srv: srv, out: &fakeOutput{srv: srv, dir: t.TempDir()}}
	}, conformance.Options{Release: fakeagent.DefaultAgent, Heartbeat: fakeHeartbeat})
}

// fakeHeartbeat is the fake's HEARTBEAT period.
const fakeHeartbeat = 50 * time.Millisecond

type fakeAgent struct {
	srv *fakeagent.Server
	out *fakeOutput
}

func (f *fakeAgent) Port() int                  { return f.srv.Port() }
func (f *fakeAgent) PortFile() string           { return f.srv.PortFile() }
func (f *fakeAgent) Output() conformance.Output { return f.out }
func (f *fakeAgent) App() *conformance.App      { return nil }
func (f *fakeAgent) Close()                     { f.srv.Close() }

// fakeOutput writes a class file and hands its bytes to the fake's watcher.
type fakeOutput struct {
	srv *fakeagent.Server
	dir string
}

func (o *fakeOutput) Write(t testing.TB, class string, value int) conformance.Class {
	t.Helper()
	data := []byte(fmt.Sprintf("\xca\xfe\xba\xbe fake class %s returning %d", class, value))
	path := filepath.Join(o.dir, class+".class")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	o.srv.AddPendingClass(class, path, data)
	sum := sha256.Sum256(data)
	return conformance.Class{Name: class, Path: path, SHA256: hex.EncodeToString(sum[:])}
}

var (
	refJarOnce sync.Once
	refJarDir  string // removed by TestMain after the tests
	refJar     string
	refJarErr  error
)

// TestMain removes the reference agent's build directory, which the tests
// of the whole binary share, once they are all done.
func TestMain(m *testing.M) {
	code := m.Run()
	if refJarDir != "" {
		os.RemoveAll(refJarDir)
	}
	os.Exit(code)
}

// referenceJar builds the reference agent once per test binary.
func referenceJar(t *testing.T) string {
	t.Helper()
	refJarOnce.Do(func() {
		dir, err := os.MkdirTemp("", "conformance-refagent-")
		if err != nil {
			refJarErr = err
			return
		}
		refJarDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		refJar, refJarErr = refagent.Build(ctx, dir)
	})
	if refJarErr != nil {
		t.Fatalf("building the reference agent: %v", refJarErr)
	}
	return refJar
}

// TestReferenceAgent holds harness/refagent, attached to a live JVM, to the
// protocol, including the live-reload cases.
func TestReferenceAgent(t *testing.T) {
	t.Parallel()
	jar := referenceJar(t)
	conformance.Run(t, func(t *testing.T) conformance.Agent {
		return conformance.StartJVM(t, conformance.JVMConfig{
			JavaAgent: func(dirs []string, portFile string) (string, error) {
				return refagent.AgentFlag(jar, refagent.Options{WatchDirs: dirs, PortFile: portFile, DebounceMs: 50})
			},
		})
	}, conformance.Options{Release: refagent.Release})
}

// TestRealAgent holds a real Reclazz agent jar to the protocol when
// BUILDGUARD_AGENT_JAR names one. BUILDGUARD_AGENT_ARGS, when set, is
// appended to the agent arguments (after portFile=<path>); "{dirs}" in it is
// replaced by the watched output directories joined with ';'.
func TestRealAgent(t *testing.T) {
	jar := os.Getenv("BUILDGUARD_AGENT_JAR")
	if jar == "" {
		t.Skip("not run: BUILDGUARD_AGENT_JAR is unset")
	}
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("BUILDGUARD_AGENT_JAR: %v", err)
	}
	extra := os.Getenv("BUILDGUARD_AGENT_ARGS")
	conformance.Run(t, func(t *testing.T) conformance.Agent {
		return conformance.StartJVM(t, conformance.JVMConfig{
			JavaAgent: func(dirs []string, portFile string) (string, error) {
				args := "portFile=" + portFile
				if extra != "" {
					args += "," + strings.ReplaceAll(extra, "{dirs}", strings.Join(dirs, ";"))
				}
				return "-javaagent:" + jar + "=" + args, nil
			},
			StartTimeout: 2 * time.Minute,
		})
	}, conformance.Options{Wait: 30 * time.Second})
}
