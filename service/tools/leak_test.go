package tools_test

import (
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/service/tools"
)

// Every tool closes its agent connection on every path: success, a failed
// project gate, a reply that never comes and a malformed reply.
func TestNoConnectionLeftOpen(t *testing.T) {
	t.Parallel()
	calls := map[string]map[string]any{
		tools.ToolStatus: {}, tools.ToolScan: {}, tools.ToolPending: {}, tools.ToolDiagnose: {"className": "A"},
		tools.ToolDoctor: {}, tools.ToolReloadControl: {"action": "status"}, tools.ToolBuild: {"state": "started", "owner": "o"},
		tools.ToolVerify:      {"className": "A", "sha256": sha},
		tools.ToolVerifyBatch: {"items": []any{map[string]any{"className": "A", "sha256": sha}, map[string]any{"className": "B", "sha256": sha}}},
	}
	modes := map[string]struct {
		opts []fakeagent.Option
		gate bool
	}{
		"answered":       {},
		"gate fails":     {opts: []fakeagent.Option{fakeagent.WithDoctor(fakeagent.Evidence{WorkingDirectory: "/"})}, gate: true},
		"never answered": {opts: []fakeagent.Option{fakeagent.WithReply(fakeagent.DropReply)}},
		"malformed":      {opts: []fakeagent.Option{fakeagent.WithReply(fakeagent.SetField("status", `"made_up"`))}},
	}
	for mode, m := range modes {
		for name, args := range calls {
			t.Run(mode+"/"+name, func(t *testing.T) {
				t.Parallel()
				a := fakeagent.NewServer(t, append([]fakeagent.Option{fakeagent.WithHeartbeat(-1)}, m.opts...)...)
				full := map[string]any{"port": port(a), "timeoutMs": "300"}
				if m.gate {
					full["projectDir"] = a.Dir()
				}
				for k, v := range args {
					full[k] = v
				}
				call(t, svc(), name, full)
				if a.Accepted() == 0 {
					t.Fatal("the tool never connected")
				}
				if err := a.WaitClients(wait.Context(t, 5*time.Second), 0); err != nil {
					t.Fatalf("%s left a connection open: %v", name, err)
				}
			})
		}
	}
}
