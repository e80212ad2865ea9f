package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Timeouts of the tools (docs/decisions.md#D7). Simple tools (status, scan, pending, diagnose)
// connect within at most SimpleConnectTimeout.
const (
	DefaultSimpleTimeout  = 2000 * time.Millisecond
	DefaultSessionTimeout = 5000 * time.Millisecond
	SimpleConnectTimeout  = 2000 * time.Millisecond
	// MaxArgChars bounds every string argument, in UTF-16 units.
	MaxArgChars = 4096
	// MaxBatchItems bounds reclazz_verify_batch.
	MaxBatchItems = 32
)

// Config is the instance configuration of a Service: what the MCP server or
// the CLI was started with.
type Config struct {
	// Base is the instance base: the canonical startup --project-dir, else the
	// startup working directory. Empty means os.Getwd() at New.
	Base string
	// ProjectSelected is true when the instance was started with
	// --project-dir; it arms the DOCTOR gate on every call. Default false.
	ProjectSelected bool
	// StartupPortFile is the startup --port-file (absolute). It is used only
	// when a call names none of port, portFile, hybrisHome and projectDir.
	// Empty means none.
	StartupPortFile string
	// ClientWorkingDirectory is what doctor reports as the caller's working
	// directory. Empty means os.Getwd() at New.
	ClientWorkingDirectory string
	// Dialer connects to agents. The zero value is agentproto's default.
	Dialer agentproto.Dialer
}

// Service runs the nine tools for one instance. It is safe for concurrent use.
type Service struct {
	cfg Config
}

// New returns a Service for cfg, filling in the defaults of Config.
func New(cfg Config) *Service {
	wd, _ := os.Getwd()
	if cfg.Base == "" {
		cfg.Base = wd
	}
	if cfg.ClientWorkingDirectory == "" {
		cfg.ClientWorkingDirectory = wd
	}
	return &Service{cfg: cfg}
}

// call is one validated tool call: its arguments and effective endpoint.
type call struct {
	name    string
	args    map[string]json.RawMessage
	str     map[string]string // the known string arguments present
	timeout time.Duration
	// endpoint selects the agent port; project is the directory the gate
	// confirms ("" when the gate is not armed).
	endpoint agentproto.Endpoint
	project  string
}

// knownKeys are the argument names every tool checks, in checking order
// (docs/mcp-server.md#4.0 step 3).
var knownKeys = []string{"projectDir", "portFile", "port", "hybrisHome", "timeoutMs", "className", "sha256", "state", "owner", "action"}

// Call validates args and runs the named tool. An invalid call returns an
// *ArgError and touches no agent; the unknown-tool check comes last, as the
// contract orders it. Another error means a broken invariant, not an agent
// problem: unreachable agents, timeouts and rejections are tool results with
// IsError set. Cancelling ctx closes the agent connection at once.
func (s *Service) Call(ctx context.Context, name string, args map[string]json.RawMessage) (Result, error) {
	c, run, err := s.prepare(name, args)
	if err != nil {
		return Result{}, err
	}
	return run.run(ctx, s, c)
}

// Check runs the argument checks of Call without touching any agent: it
// returns the *ArgError Call would return for these arguments, or nil when
// Call would run the tool.
func (s *Service) Check(name string, args map[string]json.RawMessage) error {
	_, _, err := s.prepare(name, args)
	return err
}

// prepare runs every argument check of a call, in the contract's order.
func (s *Service) prepare(name string, args map[string]json.RawMessage) (*call, handler, error) {
	c, err := s.validate(name, args)
	if err != nil {
		return nil, handler{}, err
	}
	run, ok := handlers[name]
	if !ok {
		return nil, handler{}, &ArgError{Message: "Unknown tool: " + name, Protocol: true}
	}
	if err := run.check(c); err != nil {
		return nil, handler{}, err
	}
	return c, run, nil
}

type handler struct {
	sessionTool bool
	check       func(c *call) error
	run         func(ctx context.Context, s *Service, c *call) (Result, error)
}

// handlers is filled by each tool's file.
var handlers = map[string]handler{}

func argError(format string, a ...any) error {
	return &ArgError{Message: fmt.Sprintf(format, a...)}
}

func (s *Service) validate(name string, args map[string]json.RawMessage) (*call, error) {
	c := &call{name: name, args: args, str: map[string]string{}}
	for _, k := range knownKeys {
		raw, ok := args[k]
		if !ok {
			continue
		}
		var v string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
			return nil, argError("%s must be a string", k)
		}
		if agentproto.UTF16Len(v) > MaxArgChars || agentproto.HasControl(v) {
			return nil, argError("%s exceeds %d characters or contains a control character", k, MaxArgChars)
		}
		c.str[k] = v
	}
	c.timeout = DefaultSimpleTimeout
	if h, ok := handlers[name]; ok && h.sessionTool {
		c.timeout = DefaultSessionTimeout
	}
	if v, ok := c.str["timeoutMs"]; ok {
		n, ok := agentproto.ParseJavaInt(v)
		if !ok || n < 1 || n > 60000 {
			return nil, argError("timeoutMs must be an integer string between 1 and 60000")
		}
		c.timeout = time.Duration(n) * time.Millisecond
	}
	project := s.cfg.Base
	if v, ok := c.str["projectDir"]; ok {
		p, err := canonicalDir(s.cfg.Base, v)
		if err != nil {
			return nil, argError("projectDir must name an existing directory")
		}
		project = p
	}
	for _, k := range []string{"portFile", "hybrisHome"} {
		if v, ok := c.str[k]; ok && agentproto.IsBlank(v) {
			return nil, argError("%s must not be blank", k)
		}
	}
	if v, ok := c.str["port"]; ok && agentproto.IsBlank(v) {
		return nil, argError("port must not be blank")
	}
	c.endpoint = agentproto.Endpoint{Port: c.str["port"], PortFile: c.str["portFile"], HybrisHome: c.str["hybrisHome"], Base: project}
	_, explicit := c.str["projectDir"]
	if c.endpoint.Port == "" && c.endpoint.PortFile == "" && c.endpoint.HybrisHome == "" && !explicit {
		c.endpoint.PortFile = s.cfg.StartupPortFile
	}
	if s.cfg.ProjectSelected || explicit {
		c.project = project
	}
	return c, nil
}

// canonicalDir resolves p against base and returns its real path, which must
// be an existing directory.
func canonicalDir(base, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return real, nil
}

// open resolves the endpoint, connects, and runs the gate when armed.
// It returns the resolved port (also on failure, when known) and a Conn.
// The connect is bounded by connectTimeout, the handshake and the gate by a
// fresh timeoutMs each (all within ctx, which carries the whole budget of the
// simple tools and of verify_batch).
func (s *Service) open(ctx context.Context, c *call, connectTimeout time.Duration) (int, *agentproto.Conn, error) {
	port, err := c.endpoint.Resolve()
	if err != nil {
		return port, nil, &openError{err: err, beforeSocket: true}
	}
	d := s.cfg.Dialer
	d.ConnectTimeout = connectTimeout
	d.HandshakeTimeout = c.timeout
	conn, err := d.Dial(ctx, port)
	if err != nil {
		return port, nil, &openError{err: err}
	}
	if c.project != "" {
		gctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		if err := conn.ConfirmProject(gctx, c.project); err != nil {
			conn.Close()
			return port, nil, &openError{err: err}
		}
	}
	return port, conn, nil
}

// openError is a failure to reach a confirmed agent: endpoint resolution
// (beforeSocket), connect, handshake or the project gate.
type openError struct {
	err          error
	beforeSocket bool
}

func (e *openError) Error() string { return e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

// sessionMessage is how session tools word an open failure: endpoint errors
// as they are, socket failures after "Cannot open build session: ".
func sessionMessage(err error) string {
	var oe *openError
	if errors.As(err, &oe) && oe.beforeSocket {
		return oe.err.Error()
	}
	if errors.Is(err, agentproto.ErrInvalidHandshake) {
		return "Cannot open build session: No valid agent handshake"
	}
	return "Cannot open build session: " + err.Error()
}

// result encodes data as the result object.
func result(data agentproto.Object, isError bool, legacy string) (Result, error) {
	raw, err := data.MarshalJSON()
	if err != nil {
		return Result{}, fmt.Errorf("encoding result: %w", err)
	}
	if legacy == "" {
		legacy = string(raw)
	}
	return Result{Data: raw, IsError: isError, LegacyText: legacy}, nil
}

// obj builds an ordered object from key/value pairs.
func obj(kv ...any) agentproto.Object {
	o := agentproto.Object{}
	for i := 0; i+1 < len(kv); i += 2 {
		var err error
		if o, err = o.SetValue(kv[i].(string), kv[i+1]); err != nil {
			panic(err) // only plain values are passed here
		}
	}
	return o
}
