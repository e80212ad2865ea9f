//go:build unix

package clients

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds of the scenario runner.
const (
	// ReceiptPollTimeout bounds polling VERIFY for an applied receipt.
	ReceiptPollTimeout = 15 * time.Second
	// receiptPollInterval is the pause between VERIFY polls.
	receiptPollInterval = 100 * time.Millisecond
	// HeldFor is how long a held value is re-probed.
	HeldFor = 1600 * time.Millisecond
	// heldInterval is the pause between held probes.
	heldInterval = 75 * time.Millisecond
	// PendingTimeout bounds waiting for the paused agent to count the change.
	PendingTimeout = 10 * time.Second
	// callTimeoutMs is the timeoutMs argument of every tool call.
	callTimeoutMs = "3000"
)

// Owners of the scenarios.
const (
	Owner      = "sdk-owner"
	OtherOwner = "other-owner"
)

// InstallDirName is where a lane installs the binary and the agent jar; it is
// also the server's (unrelated) launch directory.
const InstallDirName = "installed tools with spaces"

// LaneConfig configures RunLane.
type LaneConfig struct {
	// Name names the lane in messages, files and the matrix. Required.
	Name string
	// WorkDir is the lane's fresh directory; it must not exist. Required.
	WorkDir string
	// Binary is the buildguard binary to install. Required.
	Binary string
	// AgentJar is the agent jar to install. Required.
	AgentJar string
	// Java is the java executable. Empty means java from PATH.
	Java string
	// Dial connects a client to the server command. Required.
	Dial func(ctx context.Context, server ServerCommand) (Client, error)
	// ReferenceSchemas supplies the output schemas for sessions that do not
	// advertise them (2024-11-05); nil means such a lane fails.
	ReferenceSchemas func(ctx context.Context, server ServerCommand) (*Schemas, error)
	// Metadata is copied into evaluation.json and evidence.json (client,
	// SDK, JDK, OS versions …). Nil means none.
	Metadata map[string]any
	// SkipHold is fault injection for the witness run only: failed-build-hold
	// compiles v3 without taking the hold (no build started, no build
	// failed), so its held check must fail. Default false.
	SkipHold bool
}

// callResult is one call in the evidence.
type callResult struct {
	Name    string          `json:"name"`
	IsError bool            `json:"isError"`
	RPCCode int64           `json:"rpcCode,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Text    string          `json:"text,omitempty"`
}

// runner is one lane's run.
type runner struct {
	cfg      LaneConfig
	rec      *Recorder
	client   Client
	app      *App
	proj     *Project
	schemas  *Schemas
	install  string
	version  string
	tools    []string
	calls    int
	results  []callResult
	called   map[string]int
	last     Probe
	session  string
	h        map[int]string // Service.class hash by value
	appHash  string
	artifact map[string]string
}

// LaneReport is what RunLane returns.
type LaneReport struct {
	Evaluation Evaluation
	// EvaluationPath and EvidencePath are the written files; EvidencePath is
	// empty unless the lane passed.
	EvaluationPath string
	EvidencePath   string
}

// RunLane runs one lane: it installs the binary and agent jar into a
// directory with spaces, generates and starts the consumer JVM, starts
// `buildguard mcp --project-dir <project> --port-file agent.port` from the
// install directory through the lane's client, runs the setup checks, the
// scored scenarios and the pause/resume extension, and writes evaluation.json
// (always) and evidence.json (only on a full pass) into WorkDir. The JVM and
// the server are stopped on every path. The error names the lane, the step
// and the call.
func RunLane(ctx context.Context, cfg LaneConfig) (LaneReport, error) {
	r := &runner{cfg: cfg, rec: NewRecorder(cfg.Name), called: map[string]int{}, h: map[int]string{}, artifact: map[string]string{}}
	rep := LaneReport{EvaluationPath: filepath.Join(cfg.WorkDir, "evaluation.json")}
	if _, err := os.Stat(cfg.WorkDir); err == nil {
		return rep, fmt.Errorf("lane %s: work dir %s exists; use a fresh one to keep earlier evidence", cfg.Name, cfg.WorkDir)
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return rep, fmt.Errorf("lane %s: %w", cfg.Name, err)
	}
	defer func() {
		if r.client != nil {
			r.client.Close()
		}
		if r.app != nil {
			r.app.Close()
		}
	}()

	r.rec.Run("setup", func() error { return r.setup(ctx) })
	steps := []func(context.Context) error{r.successfulReload, r.mixedBatch, r.failedBuildHold, r.recovery, r.staleReceipt, r.unavailableTarget, r.malformedInput,
		r.safeBuildProgress, r.safeBuildCancel, r.concurrentSafeBuilds}
	for i, name := range Scenarios {
		r.rec.Run(name, func() error { return steps[i](ctx) })
	}
	r.rec.Run(Extension, func() error {
		if err := r.pauseResume(ctx); err != nil {
			return err
		}
		return r.finalChecks()
	})

	meta := map[string]any{}
	for k, v := range cfg.Metadata {
		meta[k] = v
	}
	meta["protocolVersion"] = r.version
	meta["artifacts"] = r.artifact
	if r.client != nil {
		meta["serverName"], meta["serverVersion"] = r.client.ServerName(), r.client.ServerVersion()
	}
	ev := r.rec.Evaluation(meta)
	rep.Evaluation = ev
	if err := WriteJSON(rep.EvaluationPath, ev); err != nil {
		return rep, fmt.Errorf("lane %s: %w", cfg.Name, err)
	}
	if err := r.rec.Err(); err != nil {
		return rep, fmt.Errorf("lane %s: %w", cfg.Name, err)
	}
	if !ev.Passed {
		return rep, fmt.Errorf("lane %s: not passed: %+v", cfg.Name, ev.Summary)
	}
	evidence := map[string]any{
		"passed":            true,
		"lane":              cfg.Name,
		"metadata":          meta,
		"pid":               r.app.PID,
		"nonce":             r.app.Nonce,
		"sessionId":         r.session,
		"tools":             r.tools,
		"negativeWitnesses": ev.Summary.NegativeWitnesses,
		"scenarios":         Scenarios,
		"extension":         Extension,
		"summary":           ev.Summary,
		"results":           r.results,
	}
	rep.EvidencePath = filepath.Join(cfg.WorkDir, "evidence.json")
	if err := WriteJSON(rep.EvidencePath, evidence); err != nil {
		return rep, fmt.Errorf("lane %s: %w", cfg.Name, err)
	}
	return rep, nil
}

// structured reports whether the session carries outputSchema and structuredContent.
func (r *runner) structured() bool { return r.version >= Version20250618 }

// annotated reports whether tools/list carries annotations (from 2025-03-26, docs/decisions.md#D5).
func (r *runner) annotated() bool { return r.version >= Version20250326 }

// argErrorsAreToolErrors reports whether invalid arguments come back as tool
// errors (2025-11-25 and later, docs/decisions.md#D5) instead of -32602.
func (r *runner) argErrorsAreToolErrors() bool { return r.version >= Version20251125 }

// alive checks that the server answers: ping, or, from 2026-07-28 on, which
// has no ping (docs/http.md#4), tools/list.
func (r *runner) alive(ctx context.Context) error {
	if r.version < Version20260728 {
		return r.client.Ping(ctx)
	}
	_, err := r.client.ListTools(ctx)
	return err
}

func (r *runner) server() ServerCommand {
	return ServerCommand{
		Binary: filepath.Join(r.install, "buildguard"),
		Args:   []string{"mcp", "--project-dir", r.proj.Root, "--port-file", "agent.port"},
		Dir:    r.install,
	}
}

func (r *runner) setup(ctx context.Context) error {
	r.install = filepath.Join(r.cfg.WorkDir, InstallDirName)
	if err := os.MkdirAll(r.install, 0o755); err != nil {
		return err
	}
	bin, err := installFile(r.cfg.Binary, filepath.Join(r.install, "buildguard"), 0o755)
	if err != nil {
		return err
	}
	jar, err := installFile(r.cfg.AgentJar, filepath.Join(r.install, filepath.Base(r.cfg.AgentJar)), 0o644)
	if err != nil {
		return err
	}
	r.artifact["buildguard"], r.artifact["agentJar"] = bin, jar
	if r.proj, err = NewProject(ctx, r.cfg.WorkDir); err != nil {
		return err
	}
	if r.appHash, err = r.proj.ClassSHA("App"); err != nil {
		return err
	}
	if r.h[1], err = r.proj.ClassSHA("Service"); err != nil {
		return err
	}
	if r.app, err = StartApp(ctx, r.proj, AppConfig{Java: r.cfg.Java, AgentJar: filepath.Join(r.install, filepath.Base(r.cfg.AgentJar))}); err != nil {
		return err
	}
	if r.client, err = r.cfg.Dial(ctx, r.server()); err != nil {
		return err
	}
	r.version = r.client.ProtocolVersion()
	if want := r.cfg.Name; want == "" {
		return errors.New("lane has no name")
	}
	if n := r.client.ServerName(); n != "buildguard" {
		return fmt.Errorf("serverInfo.name %q, want buildguard", n)
	}
	vout, err := exec.CommandContext(ctx, filepath.Join(r.install, "buildguard"), "version").Output()
	if err != nil {
		return fmt.Errorf("buildguard version: %w", err)
	}
	if v := strings.TrimSpace(string(vout)); v == "" || v != r.client.ServerVersion() {
		return fmt.Errorf("serverInfo.version %q, but buildguard version prints %q", r.client.ServerVersion(), v)
	}
	if err := r.alive(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	tools, err := r.client.ListTools(ctx)
	if err != nil {
		return err
	}
	r.tools = toolNames(tools)
	if !slices.Equal(r.tools, ToolNames) {
		return fmt.Errorf("tools/list gave %v, want the ten %v", r.tools, ToolNames)
	}
	if r.structured() {
		for _, t := range tools {
			if len(t.OutputSchema) == 0 || !t.HasAnnotations {
				return fmt.Errorf("%w: %s lacks outputSchema or annotations in a %s session", ErrShape, t.Name, r.version)
			}
		}
		if r.schemas, err = CompileSchemas(tools); err != nil {
			return err
		}
	} else {
		for _, t := range tools {
			if len(t.OutputSchema) != 0 || t.HasAnnotations != r.annotated() {
				return fmt.Errorf("%w: %s in a %s session: outputSchema %v, annotations %v (want none, %v)", ErrShape, t.Name, r.version, len(t.OutputSchema) != 0, t.HasAnnotations, r.annotated())
			}
		}
		if r.cfg.ReferenceSchemas == nil {
			return errors.New("a legacy lane needs reference schemas")
		}
		if r.schemas, err = r.cfg.ReferenceSchemas(ctx, r.server()); err != nil {
			return fmt.Errorf("reference schemas: %w", err)
		}
	}

	status, err := r.call(ctx, "reclazz_status", nil, wantOK)
	if err != nil {
		return err
	}
	if status["attached"] != true {
		return fmt.Errorf("status not attached: %v", status)
	}
	doc, err := r.call(ctx, "reclazz_doctor", nil, wantOK)
	if err != nil {
		return err
	}
	if err := r.checkIdentity(doc); err != nil {
		return err
	}
	if _, err := r.call(ctx, "reclazz_pending", nil, wantOK); err != nil {
		return err
	}
	if _, err := r.call(ctx, "reclazz_diagnose", map[string]any{"className": "Service"}, wantOK); err != nil {
		return err
	}
	p, err := r.probe(ctx, 1)
	if err != nil {
		return err
	}
	if p.Counter != 1 {
		return fmt.Errorf("first probe counter %d, want 1", p.Counter)
	}
	return nil
}

// checkIdentity checks the baseline DOCTOR against the live JVM and the
// directories, and fixes the baseline identity.
func (r *runner) checkIdentity(doc map[string]any) error {
	want := map[string]any{"status": "observed", "pid": r.app.PID, "reloadConfirmed": false, "verifySupported": true, "buildOwnershipSupported": true, "buildHold": "none", "watcherState": "watching"}
	for k, v := range want {
		if doc[k] != v {
			return fmt.Errorf("doctor %s = %v, want %v", k, doc[k], v)
		}
	}
	if strconv.Itoa(r.app.proc.PID()) != r.app.PID {
		return fmt.Errorf("the app reports pid %s, but java was started as %d", r.app.PID, r.app.proc.PID())
	}
	if err := sameDir(doc["workingDirectory"], r.proj.Root, "workingDirectory"); err != nil {
		return err
	}
	if err := sameDir(doc["clientWorkingDirectory"], r.install, "clientWorkingDirectory"); err != nil {
		return err
	}
	sess, _ := doc["sessionId"].(string)
	if sess == "" {
		return errors.New("doctor has no sessionId")
	}
	r.session = sess
	r.rec.SetBaseline(Identity{PID: r.app.PID, Nonce: r.app.Nonce, Session: sess})
	return nil
}

func sameDir(got any, want, field string) error {
	s, ok := got.(string)
	if !ok {
		return fmt.Errorf("doctor %s = %v, want %s", field, got, want)
	}
	a, err1 := filepath.EvalSymlinks(s)
	b, err2 := filepath.EvalSymlinks(want)
	if err1 != nil || err2 != nil || a != b {
		return fmt.Errorf("doctor %s = %q, want %q", field, s, want)
	}
	return nil
}

func (r *runner) successfulReload(ctx context.Context) error {
	if _, err := r.build(ctx, "started", Owner, wantOK); err != nil {
		return err
	}
	h, err := r.compile(ctx, 2)
	if err != nil {
		return err
	}
	if _, err := r.build(ctx, "ok", Owner, wantOK); err != nil {
		return err
	}
	return r.proveReload(ctx, h, 2)
}

func (r *runner) mixedBatch(ctx context.Context) error {
	items := []map[string]any{{"className": "Service", "sha256": r.h[2]}, {"className": "App", "sha256": r.appHash}}
	d, err := r.call(ctx, "reclazz_verify_batch", map[string]any{"items": items}, wantToolError)
	if err != nil {
		return err
	}
	for k, v := range map[string]any{"status": "incomplete", "allApplied": false, "atomic": false, "reloadConfirmed": false, "sessionId": r.session} {
		if d[k] != v {
			return fmt.Errorf("verify_batch %s = %v, want %v", k, d[k], v)
		}
	}
	res, _ := d["results"].([]any)
	var st []string
	for _, it := range res {
		m, _ := it.(map[string]any)
		s, _ := m["status"].(string)
		st = append(st, s)
	}
	if !slices.Equal(st, []string{"applied", "not_observed"}) {
		return fmt.Errorf("verify_batch statuses %v, want [applied not_observed]", st)
	}
	_, err = r.probe(ctx, 2)
	return err
}

func (r *runner) failedBuildHold(ctx context.Context) error {
	if !r.cfg.SkipHold {
		if _, err := r.build(ctx, "started", Owner, wantOK); err != nil {
			return err
		}
	}
	h3, err := r.compile(ctx, 3)
	if err != nil {
		return err
	}
	if err := r.proj.WriteBroken(); err != nil {
		return err
	}
	if _, err := r.proj.CompileBroken(ctx); err != nil {
		return err
	}
	if !r.cfg.SkipHold {
		if _, err := r.build(ctx, "failed", Owner, wantOK); err != nil {
			return err
		}
	}
	scan, err := r.call(ctx, "reclazz_scan", nil, wantOK)
	if err != nil {
		return err
	}
	if r.structured() && scan["reloadConfirmed"] != false {
		return fmt.Errorf("scan reloadConfirmed = %v", scan["reloadConfirmed"])
	}
	if err := r.held(ctx, 2); err != nil {
		return err
	}
	other, err := r.build(ctx, "ok", OtherOwner, wantToolError)
	if err != nil {
		return err
	}
	if other != nil && other["status"] != "unavailable" {
		return fmt.Errorf("build ok as %s: status %v, want unavailable", OtherOwner, other["status"])
	}
	v, err := r.call(ctx, "reclazz_verify", map[string]any{"className": "Service", "sha256": h3}, wantToolError)
	if err != nil {
		return err
	}
	if v["status"] == "applied" || v["observedSha256"] != r.h[2] {
		return fmt.Errorf("verify of the held v3 hash: status %v observed %v, want not applied and observed = v2 %s", v["status"], v["observedSha256"], r.h[2])
	}
	doc, err := r.call(ctx, "reclazz_doctor", nil, wantOK)
	if err != nil {
		return err
	}
	if doc["buildHold"] != "named" {
		return fmt.Errorf("doctor buildHold = %v after the failed build, want named", doc["buildHold"])
	}
	_, err = r.probe(ctx, 2)
	return err
}

func (r *runner) recovery(ctx context.Context) error {
	if _, err := r.build(ctx, "started", Owner, wantOK); err != nil {
		return err
	}
	if err := r.proj.RemoveBroken(); err != nil {
		return err
	}
	h, err := r.compile(ctx, 4)
	if err != nil {
		return err
	}
	if _, err := r.build(ctx, "ok", Owner, wantOK); err != nil {
		return err
	}
	return r.proveReload(ctx, h, 4)
}

func (r *runner) staleReceipt(ctx context.Context) error {
	v, err := r.call(ctx, "reclazz_verify", map[string]any{"className": "Service", "sha256": r.h[3]}, wantToolError)
	if err != nil {
		return err
	}
	if v["status"] != "mismatch" || v["observedSha256"] != r.h[4] {
		return fmt.Errorf("verify of the stale v3 hash: status %v observed %v, want mismatch and observed = v4 %s", v["status"], v["observedSha256"], r.h[4])
	}
	_, err = r.probe(ctx, 4)
	return err
}

func (r *runner) unavailableTarget(ctx context.Context) error {
	d, err := r.call(ctx, "reclazz_doctor", map[string]any{"portFile": "missing agent.port"}, wantToolError)
	if err != nil {
		return err
	}
	if d["status"] != "unavailable" || d["reloadConfirmed"] != false {
		return fmt.Errorf("doctor on a missing port file: status %v reloadConfirmed %v", d["status"], d["reloadConfirmed"])
	}
	_, err = r.probe(ctx, 4)
	return err
}

func (r *runner) malformedInput(ctx context.Context) error {
	want := wantArgError
	if r.argErrorsAreToolErrors() {
		want = wantArgToolError
	}
	d, err := r.call(ctx, "reclazz_build", map[string]any{"state": "invented", "owner": Owner}, want)
	if err != nil {
		return err
	}
	if d["message"] != MsgBadState {
		return fmt.Errorf("malformed build: message %q, want %q", d["message"], MsgBadState)
	}
	if err := r.alive(ctx); err != nil {
		return fmt.Errorf("ping after the malformed call: %w", err)
	}
	_, err = r.probe(ctx, 4)
	return err
}

func (r *runner) pauseResume(ctx context.Context) error {
	d, err := r.reload(ctx, "pause")
	if err != nil {
		return err
	}
	if d["paused"] != true {
		return fmt.Errorf("pause: paused = %v", d["paused"])
	}
	cur := r.last.Value
	h, err := r.compile(ctx, cur+1)
	if err != nil {
		return err
	}
	if _, err := r.call(ctx, "reclazz_scan", nil, wantOK); err != nil {
		return err
	}
	deadline := time.Now().Add(PendingTimeout)
	for {
		d, err = r.reload(ctx, "status")
		if err != nil {
			return err
		}
		if d["paused"] != true {
			return fmt.Errorf("status while paused: paused = %v", d["paused"])
		}
		if n, _ := d["pendingClasses"].(float64); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("status while paused: pendingClasses = %v after %s, want 1", d["pendingClasses"], PendingTimeout)
		}
		if err := sleep(ctx, receiptPollInterval); err != nil {
			return err
		}
	}
	if _, err := r.probe(ctx, cur); err != nil {
		return fmt.Errorf("while paused: %w", err)
	}
	d, err = r.reload(ctx, "resume")
	if err != nil {
		return err
	}
	if d["paused"] != false || d["reloadConfirmed"] != false {
		return fmt.Errorf("resume: paused %v reloadConfirmed %v", d["paused"], d["reloadConfirmed"])
	}
	return r.proveReload(ctx, h, cur+1)
}

func (r *runner) finalChecks() error {
	for _, t := range ToolNames {
		if r.called[t] == 0 {
			return fmt.Errorf("%s was never called", t)
		}
	}
	if !r.app.Alive() {
		return fmt.Errorf("%w during the run; see %s", ErrAppExited, r.app.Log)
	}
	if se, ok := r.client.(interface{ ServerStderr() string }); ok {
		if out := se.ServerStderr(); out != "" {
			return fmt.Errorf("buildguard mcp wrote to stderr in a normal session: %q", out)
		}
	}
	return nil
}

// reload calls reclazz_reload_control and checks the acknowledged shape.
func (r *runner) reload(ctx context.Context, action string) (map[string]any, error) {
	d, err := r.call(ctx, "reclazz_reload_control", map[string]any{"action": action}, wantOK)
	if err != nil {
		return nil, err
	}
	if d["status"] != "acknowledged" || d["action"] != action {
		return nil, fmt.Errorf("reload_control %s: status %v action %v", action, d["status"], d["action"])
	}
	return d, nil
}

// build calls reclazz_build; the data is nil in legacy sessions (text result).
func (r *runner) build(ctx context.Context, state, owner string, want expect) (map[string]any, error) {
	d, err := r.call(ctx, "reclazz_build", map[string]any{"state": state, "owner": owner}, want)
	if err != nil {
		return nil, err
	}
	if want == wantOK && d != nil && (d["status"] != "acknowledged" || d["state"] != state || d["owner"] != owner) {
		return nil, fmt.Errorf("build %s: %v", state, d)
	}
	return d, nil
}

// compile writes and compiles Service returning value, and records its hash.
func (r *runner) compile(ctx context.Context, value int) (string, error) {
	if err := r.proj.WriteService(value); err != nil {
		return "", err
	}
	h, err := r.proj.CompileService(ctx)
	if err != nil {
		return "", err
	}
	r.h[value] = h
	return h, nil
}

// proveReload polls VERIFY until the receipt is applied (bounded), probes
// the app and hands both to the oracle.
func (r *runner) proveReload(ctx context.Context, hash string, value int) error {
	before := r.last
	deadline := time.Now().Add(ReceiptPollTimeout)
	var d map[string]any
	var err error
	for {
		d, err = r.call(ctx, "reclazz_verify", map[string]any{"className": "Service", "sha256": hash}, wantEither)
		if err != nil {
			return err
		}
		if d["status"] == "applied" || time.Now().After(deadline) {
			break
		}
		if err := sleep(ctx, receiptPollInterval); err != nil {
			return err
		}
	}
	var rc Receipt
	b, _ := json.Marshal(d)
	json.Unmarshal(b, &rc)
	p, err := r.app.Probe(ctx)
	if err != nil {
		return err
	}
	obsErr := r.rec.Observe(p)
	r.last = p
	if !r.rec.Claim("Service", hash, value, rc, d, before, p) {
		return fmt.Errorf("%w: Service v%d (%s): receipt %v, probe %+v", ErrFalseCompletion, value, hash, d, p)
	}
	return obsErr
}

// probe asks the app once and requires value.
func (r *runner) probe(ctx context.Context, value int) (Probe, error) {
	p, err := r.app.Probe(ctx)
	if err != nil {
		return p, err
	}
	if err := r.rec.Observe(p); err != nil {
		return p, err
	}
	r.last = p
	if p.Value != value {
		return p, fmt.Errorf("probe shows value %d, want %d", p.Value, value)
	}
	return p, nil
}

// held probes repeatedly for HeldFor and requires value throughout.
func (r *runner) held(ctx context.Context, value int) error {
	end := time.Now().Add(HeldFor)
	for time.Now().Before(end) {
		if _, err := r.probe(ctx, value); err != nil {
			return fmt.Errorf("held check: %w", err)
		}
		if err := sleep(ctx, heldInterval); err != nil {
			return err
		}
	}
	return nil
}

// expect is what a call must return.
type expect int

const (
	wantOK           expect = iota // a tool result, isError false
	wantToolError                  // a tool result, isError true
	wantEither                     // a tool result, either way (polls)
	wantArgError                   // JSON-RPC -32602
	wantArgToolError               // an argument error as a tool error (2025-11-25)
)

// MsgBadState is the argument error of reclazz_build with an invalid state
// (docs/mcp-server.md#4.6), as -32602 or, from 2025-11-25, as the tool error text.
const MsgBadState = "reclazz_build requires state: started, ok or failed"

// Legacy texts of the prose tools (docs/mcp-server.md#4.3–4.6).
const (
	legacyScanSent      = "Sent SCAN to the agent. Acceptance and reload completion are not confirmed."
	legacyScanFailed    = "Scan request failed: "
	legacyBuildFailed   = "Build signal not confirmed: "
	legacyPendingFailed = "Pending query failed: "
	legacyDiagFailed    = "Diagnosis query failed: "
)

// checkLegacyText checks the legacy prose of build, scan, pending and diagnose.
func checkLegacyText(tool string, args map[string]any, isError bool, text string) error {
	var ok bool
	var want string
	switch tool {
	case "reclazz_build":
		if isError {
			want, ok = legacyBuildFailed+"…", strings.HasPrefix(text, legacyBuildFailed)
		} else {
			want = fmt.Sprintf("Acknowledged BUILD %v. This is not reload completion.", args["state"])
			ok = text == want
		}
	case "reclazz_scan":
		if isError {
			want, ok = legacyScanFailed+"…", strings.HasPrefix(text, legacyScanFailed)
		} else {
			want, ok = legacyScanSent, text == legacyScanSent
		}
	case "reclazz_pending", "reclazz_diagnose":
		prefix := legacyPendingFailed
		if tool == "reclazz_diagnose" {
			prefix = legacyDiagFailed
		}
		if isError {
			want, ok = prefix+"…", strings.HasPrefix(text, prefix)
		} else {
			want, ok = "the agent's INFO lines", text != "" && !strings.HasPrefix(text, prefix)
		}
	default:
		return fmt.Errorf("%w: %s has no legacy prose", ErrShape, tool)
	}
	if !ok {
		return fmt.Errorf("%w: legacy text %q, want %s", ErrShape, text, want)
	}
	return nil
}

// legacyJSONTools return JSON text in legacy sessions; the others return
// legacy prose.
var legacyJSONTools = map[string]bool{"reclazz_status": true, "reclazz_doctor": true, "reclazz_verify": true, "reclazz_verify_batch": true, "reclazz_reload_control": true, "reclazz_safe_build": true}

// call runs one tool call and applies the per-call checks: isError as
// expected; structuredContent present (from 2025-06-18) and equal to the JSON
// text, or absent (legacy, parsed from the text where the tool answers JSON);
// the data valid against the output schema, with a required-field deletion
// rejected (a negative witness); reloadConfirmed never true. It returns the
// data object, or nil for legacy prose results and argument errors. The error
// names the call.
func (r *runner) call(ctx context.Context, tool string, args map[string]any, want expect) (map[string]any, error) {
	r.calls++
	n := r.calls
	fail := func(format string, a ...any) error {
		return fmt.Errorf("call #%d %s: %s", n, tool, fmt.Sprintf(format, a...))
	}
	full := map[string]any{"timeoutMs": callTimeoutMs}
	for k, v := range args {
		full[k] = v
	}
	r.rec.Call(tool)
	r.called[tool]++
	res, err := r.client.Call(ctx, tool, full)
	if err != nil {
		return nil, fail("%v", err)
	}
	return r.check(tool, full, res, want, fail)
}

// check applies call's checks to the result res of tool with the arguments
// full; fail names the call.
func (r *runner) check(tool string, full map[string]any, res CallResult, want expect, fail func(format string, a ...any) error) (map[string]any, error) {
	cr := callResult{Name: tool, IsError: res.IsError, RPCCode: res.RPCCode}
	defer func() { r.results = append(r.results, cr) }()
	if want == wantArgError {
		if res.RPCCode != -32602 {
			return nil, fail("want JSON-RPC -32602, got code %d isError %v %v", res.RPCCode, res.IsError, res.Texts)
		}
		cr.Text = res.RPCMessage
		return map[string]any{"message": res.RPCMessage}, nil
	}
	if res.RPCCode != 0 {
		return nil, fail("JSON-RPC error %d %s", res.RPCCode, res.RPCMessage)
	}
	if len(res.Texts) != 1 {
		return nil, fail("%d text blocks, want 1", len(res.Texts))
	}
	cr.Text = res.Texts[0]
	if want == wantArgToolError {
		if !res.IsError || res.Structured != nil {
			return nil, fail("want an argument error as a tool error without structuredContent, got isError %v structured %s", res.IsError, res.Structured)
		}
		return map[string]any{"message": res.Texts[0]}, nil
	}
	if (want == wantOK && res.IsError) || (want == wantToolError && !res.IsError) {
		return nil, fail("isError %v, want %v: %s", res.IsError, want == wantToolError, res.Texts[0])
	}
	var data json.RawMessage
	switch {
	case r.structured():
		if res.Structured == nil {
			return nil, fail("no structuredContent in a %s session", r.version)
		}
		same, err := SameJSON(res.Structured, []byte(res.Texts[0]))
		if err != nil || !same {
			return nil, fail("structuredContent %s differs from its text %q (%v)", res.Structured, res.Texts[0], err)
		}
		data = res.Structured
	case res.Structured != nil:
		return nil, fail("structuredContent in a %s session", r.version)
	case legacyJSONTools[tool]:
		data = json.RawMessage(res.Texts[0])
	default:
		if err := checkLegacyText(tool, full, res.IsError, res.Texts[0]); err != nil {
			return nil, fail("%v", err)
		}
	}
	if data == nil {
		return nil, nil
	}
	cr.Data = data
	w, err := r.schemas.Validate(tool, data)
	if err != nil {
		return nil, fail("%v", err)
	}
	for i := 0; i < w; i++ {
		r.rec.Witness()
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fail("decoding result: %v", err)
	}
	if m["reloadConfirmed"] == true {
		r.rec.FalseClaim(tool, "reloadConfirmed:true")
		return nil, fail("%v: reloadConfirmed is true", ErrFalseCompletion)
	}
	return m, nil
}

// installFile copies src to dst with mode and returns the SHA-256 of the bytes.
func installFile(src, dst string, mode os.FileMode) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("installing %s: %w", filepath.Base(src), err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return "", fmt.Errorf("installing %s: %w", filepath.Base(src), err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		out.Close()
		return "", fmt.Errorf("installing %s: %w", filepath.Base(src), err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("installing %s: %w", filepath.Base(src), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
