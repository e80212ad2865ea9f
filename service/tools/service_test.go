package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
	"github.com/buildguard/buildguard/service/tools"
)

const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// call runs one tool with args (Go values, encoded as JSON) and decodes the
// result object.
func call(t *testing.T, svc *tools.Service, name string, args map[string]any) (tools.Result, map[string]any) {
	t.Helper()
	res, err := callErr(svc, name, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	checkSchema(t, name, res)
	var data map[string]any
	if err := json.Unmarshal(res.Data, &data); err != nil {
		t.Fatalf("%s: result is not a JSON object: %s", name, res.Data)
	}
	return res, data
}

func callErr(svc *tools.Service, name string, args map[string]any) (tools.Result, error) {
	raw := map[string]json.RawMessage{}
	for k, v := range args {
		b, err := json.Marshal(v)
		if err != nil {
			return tools.Result{}, err
		}
		raw[k] = b
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return svc.Call(ctx, name, raw)
}

// port returns the fake agent's port as the string argument tools take.
func port(a *fakeagent.Server) string { return strconv.Itoa(a.Port()) }

func svc() *tools.Service { return tools.NewService(tools.Deps{}) }

func TestStatus(t *testing.T) {
	t.Parallel()
	t.Run("attached", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t)
		res, data := call(t, svc(), tools.ToolStatus, map[string]any{"port": port(a)})
		if res.IsError || data["attached"] != true || data["agent"] != "1.1.1" || data["protocol"] != 1.0 || data["port"] != float64(a.Port()) {
			t.Fatalf("status = %s", res.Data)
		}
		if h := data["health"].([]any); len(h) == 0 || !strings.HasPrefix(h[0].(string), "Reclazz 1.1.1") {
			t.Errorf("health = %v", h)
		}
		if _, ok := data["reason"]; ok {
			t.Errorf("complete health carries a reason: %s", res.Data)
		}
		if string(res.Data) != res.LegacyText {
			t.Errorf("legacy text %q differs from the JSON", res.LegacyText)
		}
	})
	t.Run("discovered from the project's port file", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t)
		_, data := call(t, tools.NewService(tools.Deps{Base: a.Dir()}), tools.ToolStatus, nil)
		if data["attached"] != true {
			t.Fatalf("status = %v", data)
		}
	})
	t.Run("health silent", func(t *testing.T) {
		t.Parallel()
		a := fakeagent.NewServer(t, fakeagent.WithReply(fakeagent.ForKind(fakeagent.DropReply, fakeagent.KindHealth)))
		res, data := call(t, svc(), tools.ToolStatus, map[string]any{"port": port(a), "timeoutMs": "700"})
		if res.IsError || data["attached"] != true || data["reason"] != agentproto.ErrNoInfo.Error() || len(data["health"].([]any)) != 0 {
			t.Fatalf("status = %s", res.Data)
		}
	})
	for name, tc := range map[string]struct {
		args   map[string]any
		reason string
		port   any
	}{
		"no port file":  {map[string]any{"projectDir": t.TempDir()}, noPortFileReason, nil},
		"port 65536":    {map[string]any{"port": "65536"}, "invalid port: 65536", 65536.0},
		"port -1":       {map[string]any{"port": "-1"}, "invalid port: -1", -1.0},
		"port unparsed": {map[string]any{"port": "x1"}, "invalid port: x1", nil},
		"unreachable":   {map[string]any{"port": "1"}, "cannot reach the agent on 127.0.0.1:1", 1.0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, data := call(t, svc(), tools.ToolStatus, tc.args)
			if res.IsError || data["attached"] != false || data["reason"] != tc.reason || data["port"] != tc.port {
				t.Fatalf("status = %s", res.Data)
			}
		})
	}
}

func TestScan(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t)
	res, data := call(t, svc(), tools.ToolScan, map[string]any{"port": port(a)})
	if res.IsError || data["status"] != "sent" || data["reloadConfirmed"] != false || !strings.HasPrefix(res.LegacyText, "Sent SCAN") {
		t.Fatalf("scan = %s / %q", res.Data, res.LegacyText)
	}
	if _, err := a.WaitCommand(wait.Context(t, 5*time.Second), "SCAN"); err != nil {
		t.Errorf("agent never received SCAN: %v", err)
	}
	res, data = call(t, svc(), tools.ToolScan, map[string]any{"port": "1"})
	if !res.IsError || data["status"] != "unavailable" || !strings.HasPrefix(res.LegacyText, "Scan request failed: cannot reach") {
		t.Fatalf("scan offline = %s / %q", res.Data, res.LegacyText)
	}
}

func TestPendingAndDiagnose(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t, fakeagent.WithPaused())
	res, data := call(t, svc(), tools.ToolPending, map[string]any{"port": port(a)})
	lines := data["lines"].([]any)
	if res.IsError || data["status"] != "observed" || data["complete"] != false || len(lines) < 2 ||
		lines[0] != "Automatic reload: paused=true pendingClasses=0 pendingActions=0 buildHold=none" {
		t.Fatalf("pending = %s", res.Data)
	}
	if res.LegacyText != data["detail"] || !strings.Contains(res.LegacyText, "\n") {
		t.Errorf("legacy text %q is not the joined lines", res.LegacyText)
	}

	res, data = call(t, svc(), tools.ToolDiagnose, map[string]any{"port": port(a), "className": "com.acme.A"})
	if res.IsError || data["className"] != "com.acme.A" || !strings.HasPrefix(data["lines"].([]any)[0].(string), "Reclazz diagnosis for com.acme.A") {
		t.Fatalf("diagnose = %s", res.Data)
	}
	if _, err := a.WaitCommand(wait.Context(t, 5*time.Second), "DIAGNOSE com.acme.A"); err != nil {
		t.Error(err)
	}

	silent := fakeagent.NewServer(t, fakeagent.WithReply(fakeagent.ForKind(fakeagent.DropReply, fakeagent.KindPending)))
	res, data = call(t, svc(), tools.ToolPending, map[string]any{"port": port(silent), "timeoutMs": "600"})
	if !res.IsError || data["status"] != "unavailable" || res.LegacyText != "Pending query failed: "+agentproto.ErrNoInfo.Error() {
		t.Fatalf("silent pending = %s / %q", res.Data, res.LegacyText)
	}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t)
	res, data := call(t, svc(), tools.ToolBuild, map[string]any{"port": port(a), "state": "started", "owner": "o1"})
	if res.IsError || data["status"] != "acknowledged" || data["state"] != "started" || data["owner"] != "o1" || data["reloadConfirmed"] != false {
		t.Fatalf("build started = %s", res.Data)
	}
	if res.LegacyText != "Acknowledged BUILD started. This is not reload completion." {
		t.Errorf("legacy text = %q", res.LegacyText)
	}
	if holding, owner := a.Hold(); !holding || owner != "o1" {
		t.Fatalf("agent hold = %v %q", holding, owner)
	}
	// Another owner is rejected; the hold stays.
	res, data = call(t, svc(), tools.ToolBuild, map[string]any{"port": port(a), "state": "ok", "owner": "other"})
	if !res.IsError || data["status"] != "unavailable" || data["detail"] != "Build signal not confirmed: BUILD ok was not acknowledged; do not assume build/reload success" {
		t.Fatalf("build ok by other owner = %s", res.Data)
	}
	if _, owner := a.Hold(); owner != "o1" {
		t.Fatalf("hold owner = %q", owner)
	}
	res, _ = call(t, svc(), tools.ToolBuild, map[string]any{"port": port(a), "state": "ok", "owner": "o1"})
	if res.IsError {
		t.Fatalf("build ok = %s", res.Data)
	}
	if err := a.WaitHold(wait.Context(t, 5*time.Second), "none"); err != nil {
		t.Fatal(err)
	}

	// A silent agent: not confirmed after timeoutMs.
	silent := fakeagent.NewServer(t, fakeagent.WithReply(fakeagent.ForBuild(fakeagent.DropReply)))
	res, data = call(t, svc(), tools.ToolBuild, map[string]any{"port": port(silent), "state": "started", "owner": "o1", "timeoutMs": "300"})
	if !res.IsError || !strings.Contains(data["detail"].(string), "was not acknowledged") {
		t.Fatalf("silent build = %s", res.Data)
	}
	// Endpoint errors are not prefixed; socket errors are.
	_, data = call(t, svc(), tools.ToolBuild, map[string]any{"port": "65536", "state": "started", "owner": "o1"})
	if data["detail"] != "Build signal not confirmed: invalid port: 65536" {
		t.Errorf("detail = %v", data["detail"])
	}
	_, data = call(t, svc(), tools.ToolBuild, map[string]any{"port": "1", "state": "started", "owner": "o1"})
	if data["detail"] != "Build signal not confirmed: Cannot open build session: cannot reach the agent on 127.0.0.1:1" {
		t.Errorf("detail = %v", data["detail"])
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t)
	a.SetReceipt("com.acme.A", fakeagent.Receipt{SHA256: sha, Source: "/p/A.class", Status: "applied", Detail: "Reloaded", CompletedAt: "2026-09-08T09:12:44.371Z"})
	res, data := call(t, svc(), tools.ToolVerify, map[string]any{"port": port(a), "className": "com.acme.A", "sha256": sha})
	if res.IsError || data["status"] != "applied" || data["observedSha256"] != sha || data["sessionId"] != a.SessionID() {
		t.Fatalf("verify = %s", res.Data)
	}
	if len(data) != 9 {
		t.Errorf("receipt has %d fields, want the agent's nine", len(data))
	}
	other := strings.Repeat("0", 64)
	res, data = call(t, svc(), tools.ToolVerify, map[string]any{"port": port(a), "className": "com.acme.A", "sha256": other})
	if !res.IsError || data["status"] != "mismatch" || data["observedSha256"] != sha {
		t.Fatalf("verify mismatch = %s", res.Data)
	}
	res, data = call(t, svc(), tools.ToolVerify, map[string]any{"port": port(a), "className": "com.acme.B", "sha256": sha})
	if !res.IsError || data["status"] != "not_observed" {
		t.Fatalf("verify not observed = %s", res.Data)
	}
	bad := fakeagent.NewServer(t, fakeagent.WithReply(fakeagent.ForKind(func(r *fakeagent.Reply) {
		r.Message = strings.Replace(r.Message, `"status":"not_observed"`, `"status":"applied"`, 1)
	}, fakeagent.KindVerify)))
	res, data = call(t, svc(), tools.ToolVerify, map[string]any{"port": port(bad), "className": "com.acme.B", "sha256": sha})
	if !res.IsError || data["status"] != "unavailable" || !strings.HasPrefix(data["detail"].(string), "Reload not verified: no valid correlated receipt") {
		t.Fatalf("forged applied receipt = %s", res.Data)
	}
	if len(data) != 4 || data["className"] != "com.acme.B" || data["expectedSha256"] != sha {
		t.Errorf("unavailable receipt shape = %s", res.Data)
	}
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t, fakeagent.WithHold("someone"), fakeagent.WithDoctor(fakeagent.Evidence{WatcherState: "starting"}))
	cwd, _ := os.Getwd()
	res, data := call(t, tools.NewService(tools.Deps{}), tools.ToolDoctor, map[string]any{"port": port(a)})
	if res.IsError || data["status"] != "observed" || data["buildHold"] != "named" || data["clientWorkingDirectory"] != cwd || data["reloadConfirmed"] != false {
		t.Fatalf("doctor = %s", res.Data)
	}
	actions := data["nextActions"].([]any)
	joined := strings.ToLower(strings.Join(strings.Fields(strings.Trim(strings.Join(toStrings(actions), "|"), "|")), " "))
	for _, want := range []string{"startup", "refused watches", "original owner"} {
		if !strings.Contains(joined, want) {
			t.Errorf("nextActions lack %q: %v", want, actions)
		}
	}
	if first := actions[0].(string); !strings.Contains(first, "PID") || !strings.Contains(actions[len(actions)-1].(string), "VERIFY") {
		t.Errorf("nextActions order: %v", actions)
	}

	un := fakeagent.NewServer(t, fakeagent.WithDoctor(fakeagent.Evidence{Unavailable: true}))
	res, data = call(t, svc(), tools.ToolDoctor, map[string]any{"port": port(un)})
	if !res.IsError || data["status"] != "unavailable" || len(data["nextActions"].([]any)) != 1 || data["requestId"] == nil {
		t.Fatalf("agent-unavailable doctor = %s", res.Data)
	}
	res, data = call(t, svc(), tools.ToolDoctor, map[string]any{"port": strings.Repeat("9", 1000)})
	if !res.IsError || data["detail"] != "Doctor evidence unavailable; check the endpoint and matching agent version." || data["pid"] != nil {
		t.Fatalf("offline doctor = %s", res.Data)
	}
}

func toStrings(v []any) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = s.(string)
	}
	return out
}

func TestReloadControl(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t)
	res, data := call(t, svc(), tools.ToolReloadControl, map[string]any{"port": port(a), "action": "pause"})
	if res.IsError || data["status"] != "acknowledged" || data["paused"] != true || data["buildHold"] != "none" || data["reloadConfirmed"] != false {
		t.Fatalf("pause = %s", res.Data)
	}
	if !a.Paused() {
		t.Error("agent not paused")
	}
	a.SetPending(3, 1)
	_, data = call(t, svc(), tools.ToolReloadControl, map[string]any{"port": port(a), "action": "status"})
	if data["pendingClasses"] != 3.0 || data["pendingActions"] != 1.0 {
		t.Errorf("status = %v", data)
	}
	old := fakeagent.NewServer(t, fakeagent.WithUnwired(fakeagent.Unwired{ReloadControl: true}))
	res, data = call(t, svc(), tools.ToolReloadControl, map[string]any{"port": port(old), "action": "resume", "timeoutMs": "300"})
	if !res.IsError || data["detail"] != "Reload control not confirmed; state may have changed. Query status before retrying." || data["action"] != "resume" {
		t.Fatalf("old agent = %s", res.Data)
	}
}

func TestVerifyBatch(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t)
	a.SetReceipt("A", fakeagent.Receipt{SHA256: sha, Source: "/p/A.class", Status: "applied", Detail: "ok", CompletedAt: "2026-09-08T09:12:44Z"})
	a.SetReceipt("B", fakeagent.Receipt{SHA256: sha, Source: "/p/B.class", Status: "applied", Detail: "ok", CompletedAt: "2026-09-08T09:12:44Z"})
	items := func(classes ...string) []map[string]string {
		var out []map[string]string
		for _, c := range classes {
			out = append(out, map[string]string{"className": c, "sha256": sha})
		}
		return out
	}
	res, data := call(t, svc(), tools.ToolVerifyBatch, map[string]any{"port": port(a), "items": items("A", "B")})
	if res.IsError || data["status"] != "applied" || data["allApplied"] != true || data["sessionId"] != a.SessionID() || data["requestedCount"] != 2.0 {
		t.Fatalf("batch = %s", res.Data)
	}
	res, data = call(t, svc(), tools.ToolVerifyBatch, map[string]any{"port": port(a), "items": items("A", "C", "B")})
	results := data["results"].([]any)
	if !res.IsError || data["status"] != "incomplete" || data["allApplied"] != false || len(results) != 3 ||
		results[1].(map[string]any)["status"] != "not_observed" || results[2].(map[string]any)["status"] != "applied" {
		t.Fatalf("mixed batch = %s", res.Data)
	}
	// A receipt from a restarted agent (another session) stops the run.
	n := 0
	flip := fakeagent.NewServer(t, fakeagent.WithReply(fakeagent.ForKind(func(r *fakeagent.Reply) {
		if n++; n == 2 {
			r.Message = strings.Replace(r.Message, `"sessionId":"`, `"sessionId":"restarted-`, 1)
		}
	}, fakeagent.KindVerify)))
	res, data = call(t, svc(), tools.ToolVerifyBatch, map[string]any{"port": port(flip), "items": items("A", "B", "C")})
	results = data["results"].([]any)
	if !res.IsError || data["status"] != "unavailable" || len(results) != 3 || results[1].(map[string]any)["detail"] == nil ||
		results[1].(map[string]any)["status"] != "unavailable" || data["sessionId"] != flip.SessionID() {
		t.Fatalf("session change = %s", res.Data)
	}
	if cmds, _ := flip.WaitCommands(wait.Context(t, 5*time.Second), "VERIFY ", 2); len(cmds) != 2 || len(filter(flip.Commands(), "VERIFY ")) != 2 {
		t.Errorf("agent received %q; the third item must not be queried", flip.Commands())
	}
}

func filter(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func TestArgumentChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		tool string
		args map[string]any
		msg  string
	}{
		{tools.ToolStatus, map[string]any{"state": map[string]any{}}, "state must be a string"},
		{tools.ToolStatus, map[string]any{"port": 4000}, "port must be a string"},
		{tools.ToolStatus, map[string]any{"portFile": strings.Repeat("a", 4097)}, "portFile exceeds 4096 characters or contains a control character"},
		{tools.ToolStatus, map[string]any{"owner": "a\nb"}, "owner exceeds 4096 characters or contains a control character"},
		{tools.ToolStatus, map[string]any{"timeoutMs": "0"}, "timeoutMs must be an integer string between 1 and 60000"},
		{tools.ToolStatus, map[string]any{"timeoutMs": " 5"}, "timeoutMs must be an integer string between 1 and 60000"},
		{tools.ToolStatus, map[string]any{"timeoutMs": "1.5"}, "timeoutMs must be an integer string between 1 and 60000"},
		{tools.ToolStatus, map[string]any{"projectDir": file}, "projectDir must name an existing directory"},
		{tools.ToolStatus, map[string]any{"port": " "}, "port must not be blank"},
		{tools.ToolStatus, map[string]any{"portFile": " "}, "portFile must not be blank"},
		{"reclazz_nope", map[string]any{"timeoutMs": "x"}, "timeoutMs must be an integer string between 1 and 60000"},
		{"reclazz_nope", nil, "Unknown tool: reclazz_nope"},
		{tools.ToolDiagnose, map[string]any{"className": "../A"}, "reclazz_diagnose requires a valid binary className of at most 256 characters"},
		{tools.ToolVerify, map[string]any{"className": "A", "sha256": strings.ToUpper(sha)}, "reclazz_verify requires className and a lower-case 64-digit sha256"},
		{tools.ToolBuild, map[string]any{"state": "invented", "owner": "o"}, "reclazz_build requires state: started, ok or failed"},
		{tools.ToolBuild, map[string]any{"state": "invented", "owner": "a/b"}, "reclazz_build requires owner: 1-64 ASCII letters, digits, _ or -"},
		{tools.ToolReloadControl, map[string]any{"action": "pause\nSCAN"}, "action exceeds 4096 characters or contains a control character"},
		{tools.ToolReloadControl, map[string]any{"action": "stop"}, "reclazz_reload_control requires action: pause, resume or status"},
		{tools.ToolVerifyBatch, map[string]any{"items": []any{}}, "items must contain 1–32 unique className/lower-case sha256 pairs, with no extra fields"},
		{tools.ToolVerifyBatch, map[string]any{"items": []any{map[string]any{"className": "A", "sha256": sha, "x": 1}}}, "items must contain 1–32 unique className/lower-case sha256 pairs, with no extra fields"},
		{tools.ToolVerifyBatch, map[string]any{"items": []any{map[string]any{"className": "A", "sha256": sha}, map[string]any{"className": "A", "sha256": sha}}}, "items must contain 1–32 unique className/lower-case sha256 pairs, with no extra fields"},
	}
	for _, tc := range cases {
		_, err := callErr(svc(), tc.tool, tc.args)
		var ae *tools.ArgError
		if !errors.As(err, &ae) || ae.Message != tc.msg {
			t.Errorf("%s %v: err = %v, want %q", tc.tool, tc.args, err, tc.msg)
		}
		if ae != nil && ae.Protocol != strings.HasPrefix(tc.msg, "Unknown tool") {
			t.Errorf("%s: Protocol = %v", tc.msg, ae.Protocol)
		}
	}
}

// The explicit-project gate runs DOCTOR on the same connection first and
// sends nothing else when the agent's working directory is elsewhere.
func TestProjectGate(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t)
	res, _ := call(t, svc(), tools.ToolBuild, map[string]any{"projectDir": a.Dir(), "state": "started", "owner": "g"})
	if res.IsError {
		t.Fatalf("gated build = %s", res.Data)
	}
	cmds := a.Commands()
	if len(cmds) != 2 || !strings.HasPrefix(cmds[0], "DOCTOR ") || !strings.HasPrefix(cmds[1], "BUILD started ") {
		t.Fatalf("agent received %q", cmds)
	}

	elsewhere := fakeagent.NewServer(t, fakeagent.WithDoctor(fakeagent.Evidence{WorkingDirectory: t.TempDir()}))
	project := filepath.Dir(elsewhere.PortFile())
	project = filepath.Dir(project)
	res, data := call(t, tools.NewService(tools.Deps{Base: project, ProjectSelected: true}), tools.ToolBuild, map[string]any{"state": "started", "owner": "g"})
	want := "Build signal not confirmed: Cannot open build session: Selected project could not be confirmed; no requested command sent. Check DOCTOR workingDirectory and projectDir."
	if !res.IsError || data["detail"] != want {
		t.Fatalf("gate = %s", res.Data)
	}
	if cmds := elsewhere.Commands(); len(cmds) != 1 || !strings.HasPrefix(cmds[0], "DOCTOR ") {
		t.Fatalf("agent received %q; only the gate DOCTOR may be sent", cmds)
	}
	if holding, _ := elsewhere.Hold(); holding {
		t.Fatal("a hold was installed past a failed gate")
	}
}

// noPortFileReason is the contract's reason string of an endpoint without a
// port file (docs/mcp-server.md#1.2): the wire's error and the tools' words
// for what to do, in their arguments.
const noPortFileReason = "no port file found; run the app with the Reclazz agent, or pass port/portFile"

// The startup port file applies only when a call names no selector, and a
// per-call projectDir discards it.
func TestStartupPortFile(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t)
	s := tools.NewService(tools.Deps{StartupPortFile: a.PortFile(), Base: t.TempDir()})
	if _, data := call(t, s, tools.ToolStatus, nil); data["attached"] != true {
		t.Fatalf("startup port file not used: %v", data)
	}
	if _, data := call(t, s, tools.ToolStatus, map[string]any{"projectDir": t.TempDir()}); data["attached"] != false || data["reason"] != noPortFileReason {
		t.Fatalf("projectDir did not discard the startup port file: %v", data)
	}
}

// timeoutMs and port follow Java's Integer.parseInt and trim(): a timeout in
// Arabic-Indic digits is valid, a no-break space is neither blank nor
// trimmed, so it reaches the port parse and fails there (a result, not an
// argument error).
func TestJavaNumberQuirks(t *testing.T) {
	t.Parallel()
	a := fakeagent.NewServer(t)
	res, data := call(t, svc(), tools.ToolStatus, map[string]any{"port": port(a), "timeoutMs": "\u0662\u0660\u0660\u0660"})
	if res.IsError || data["attached"] != true {
		t.Fatalf("status with timeoutMs in Arabic-Indic digits = %s", res.Data)
	}
	res, data = call(t, svc(), tools.ToolStatus, map[string]any{"port": "\u00a0"})
	if res.IsError || data["attached"] != false || data["reason"] != "invalid port: \u00a0" {
		t.Fatalf("status with port U+00A0 = %s", res.Data)
	}
	res, data = call(t, svc(), tools.ToolStatus, map[string]any{"port": port(a) + "\u00a0"})
	if data["attached"] != false || data["reason"] != "invalid port: "+port(a)+"\u00a0" {
		t.Fatalf("status with a trailing no-break space = %s; Java's trim() keeps it", res.Data)
	}
	if _, err := callErr(svc(), tools.ToolStatus, map[string]any{"portFile": "\u3000"}); err == nil || err.Error() != "portFile must not be blank" {
		t.Fatalf("portFile U+3000 = %v, want the blank-path error", err)
	}
}

// Doctor evidence and verify receipts pass the agent's own extra fields
// through, but never a field another result of buildguard defines and theirs
// does not (docs/decisions.md#D13): a receipt claiming reloadConfirmed or
// allApplied does not carry the claim into the result.
func TestPassThroughKeepsOnlyTheAgentsOwnFields(t *testing.T) {
	t.Parallel()
	receiptEdit := fakeagent.Chain(
		fakeagent.SetField("reloadConfirmed", "true"),
		fakeagent.SetField("allApplied", "true"),
		fakeagent.SetField("nextActions", `["trust me"]`),
		fakeagent.SetField("agentNote", `"kept"`),
	)
	doctorEdit := fakeagent.Chain(
		fakeagent.SetField("allApplied", "true"),
		fakeagent.SetField("attached", "true"),
		fakeagent.SetField("agentNote", `"kept"`),
	)
	a := fakeagent.NewServer(t, fakeagent.WithReply(fakeagent.Chain(
		fakeagent.ForKind(receiptEdit, fakeagent.KindVerify),
		fakeagent.ForKind(doctorEdit, fakeagent.KindDoctor))))
	a.SetReceipt("com.acme.A", fakeagent.Receipt{SHA256: sha, Source: "/p/A.class", Status: "applied", Detail: "Reloaded", CompletedAt: "2026-09-08T09:12:44.371Z"})
	item := map[string]any{"className": "com.acme.A", "sha256": sha}

	res, data := call(t, svc(), tools.ToolVerify, map[string]any{"port": port(a), "className": "com.acme.A", "sha256": sha})
	_, batch := call(t, svc(), tools.ToolVerifyBatch, map[string]any{"port": port(a), "items": []any{item}})
	results, _ := batch["results"].([]any)
	if res.IsError || len(results) != 1 {
		t.Fatalf("verify = %s, batch = %v", res.Data, batch)
	}
	for what, receipt := range map[string]any{"verify": data, "verify_batch result": results[0]} {
		r := receipt.(map[string]any)
		for _, claim := range []string{"reloadConfirmed", "allApplied", "nextActions"} {
			if v, ok := r[claim]; ok {
				t.Errorf("%s carries the agent's %s=%v: %v", what, claim, v, r)
			}
		}
		if r["agentNote"] != "kept" || r["status"] != "applied" {
			t.Errorf("%s lost the agent's own field or its status: %v", what, r)
		}
	}
	if batch["reloadConfirmed"] != false || batch["allApplied"] != true {
		t.Errorf("batch object = %v", batch)
	}

	_, doc := call(t, svc(), tools.ToolDoctor, map[string]any{"port": port(a)})
	_, hasAll := doc["allApplied"]
	_, hasAttached := doc["attached"]
	if hasAll || hasAttached || doc["status"] != "observed" || doc["reloadConfirmed"] != false || doc["agentNote"] != "kept" {
		t.Errorf("doctor = %v", doc)
	}
}
