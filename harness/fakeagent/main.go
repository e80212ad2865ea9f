package fakeagent

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Main runs the fake agent as a program until SIGINT or SIGTERM (or, with
// -stdin, until standard input closes), then deletes its port file, prints
// "accepted=N" (the number of connections it accepted) on standard output and
// returns the exit code: 0 after a clean stop, 1 when the agent cannot start,
// 2 for a usage error. It is the one fake-agent command line: the program
//
//	go run ./harness/fakeagent/cmd/fakeagent [flags]
//
// runs it, and tests register it as a testscript command, e.g.
//
//	testscript.Main(m, map[string]func(){
//		"fakeagent": func() { os.Exit(fakeagent.Main(os.Args[1:])) },
//	})
//
// and start it in the background, wait for the port file, then grep the
// command log:
//
//	exec fakeagent -portfile $WORK/.reclazz/agent.port -log $WORK/agent.log -reject started &agent&
//	waitport $WORK/.reclazz/agent.port
//	! exec buildguard -- true
//	grep '^BUILD started request=' $WORK/agent.log
//
// Flags:
//
//	-portfile PATH        port file to write (default .reclazz/agent.port in the
//	                      current directory; "-" writes none)
//	-port N               fixed port (default ephemeral)
//	-ipv6                 listen on [::1] instead of 127.0.0.1
//	-log PATH             append every received command line to PATH, one per line,
//	                      exactly as read ('\r' removed)
//	-agent VERSION        release in CONNECTED and DOCTOR (default 1.1.1)
//	-crlf                 end lines with "\r\n"
//	-heartbeat DUR        HEARTBEAT period (default 10s; 0 disables)
//	-session ID           receipt-ledger session id (default random UUID)
//	-workdir DIR          DOCTOR workingDirectory (default the current directory)
//	-watch DIR            a watched directory for DOCTOR (repeatable)
//	-watcher STATE        DOCTOR watcherState (default watching)
//	-hold OWNER           start holding for OWNER (a hold named by another owner)
//	-legacy-hold          start with a legacy (unowned) hold
//	-paused               start with automatic reload paused
//	-pending-actions N    pendingActions count reported by RELOAD/PENDING
//	-stage N              start-up stage of docs/agent-protocol.md#9 (1..4; default 4 = fully wired)
//	-unwired LIST         comma list of unwired capabilities: verifier, diagnoser,
//	                      scanner, health, owned-build, legacy-build,
//	                      doctor-context, reload-control
//	-silent-build         BUILD is ignored entirely (no listener wired)
//	-ack-without-owner    pre-ownership agent: BUILD replies lack " owner=…"
//	-accept OUTCOME       outcome of the capture after an owned BUILD ok: success,
//	                      scan-error, read-error, superseded (default success)
//	-accept-delay DUR     the capture takes this long (a competing start is
//	                      rejected meanwhile)
//	-handshake MODE       handshake fault (see ParseHandshake; default ok)
//	-handshake-delay DUR  delay CONNECTED
//	-disconnect-after-handshake  close every connection after CONNECTED
//	-disconnect-on PREFIX close a connection, unhandled, when a command line
//	                      starting with PREFIX arrives
//	-rst                  fault-driven closes reset the connection (RST)
//	-reject STATES        comma list of BUILD states (started, ok, failed) that
//	                      are rejected without any state change
//	-drop-reply LIST      comma list of replies never sent although the command
//	                      took effect: BUILD, BUILD:started, BUILD:ok,
//	                      BUILD:failed, RELOAD, DOCTOR, VERIFY, PENDING, HEALTH,
//	                      DIAGNOSE ("never ack", "lost finish ack")
//	-delay-reply DUR      send every correlated reply after DUR
//	-wrong-token LIST     replies (same spelling as -drop-reply) sent with a
//	                      wrong request token instead of the right one
//	-wrong-token-first    send each correlated reply once with a wrong token first
//	-stdin                also stop when standard input reaches EOF
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

// run is Main with injectable stop context and streams.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakeagent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		portFile    = fs.String("portfile", filepath.Join(".reclazz", "agent.port"), "")
		port        = fs.Int("port", 0, "")
		ipv6        = fs.Bool("ipv6", false, "")
		logPath     = fs.String("log", "", "")
		agent       = fs.String("agent", DefaultAgent, "")
		crlf        = fs.Bool("crlf", false, "")
		heartbeat   = fs.Duration("heartbeat", DefaultHeartbeat, "")
		session     = fs.String("session", "", "")
		workdir     = fs.String("workdir", "", "")
		watcher     = fs.String("watcher", "", "")
		hold        = fs.String("hold", "", "")
		legacyHold  = fs.Bool("legacy-hold", false, "")
		paused      = fs.Bool("paused", false, "")
		actions     = fs.Int("pending-actions", 0, "")
		stage       = fs.Int("stage", 4, "")
		unwired     = fs.String("unwired", "", "")
		silentBuild = fs.Bool("silent-build", false, "")
		noOwner     = fs.Bool("ack-without-owner", false, "")
		accept      = fs.String("accept", "success", "")
		acceptDelay = fs.Duration("accept-delay", 0, "")
		handshake   = fs.String("handshake", "ok", "")
		hsDelay     = fs.Duration("handshake-delay", 0, "")
		discHS      = fs.Bool("disconnect-after-handshake", false, "")
		discOn      = fs.String("disconnect-on", "", "")
		rst         = fs.Bool("rst", false, "")
		reject      = fs.String("reject", "", "")
		dropReply   = fs.String("drop-reply", "", "")
		delayReply  = fs.Duration("delay-reply", 0, "")
		wrongFirst  = fs.Bool("wrong-token-first", false, "")
		wrongToken  = fs.String("wrong-token", "", "")
		useStdin    = fs.Bool("stdin", false, "")
		watch       multiFlag
	)
	fs.Var(&watch, "watch", "")
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: fakeagent [flags]; see the documentation of fakeagent.Main") }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "fakeagent: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	cfg := Config{Port: *port, Agent: *agent, SessionID: *session, Paused: *paused, PendingActions: *actions}
	if *portFile != "-" {
		cfg.PortFile = *portFile
	}
	if *ipv6 {
		cfg.Host = "::1"
	}
	if *crlf {
		cfg.EOL = "\r\n"
	}
	cfg.Heartbeat = *heartbeat
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = -1
	}
	cfg.Doctor = Evidence{WorkingDirectory: *workdir, WatcherState: *watcher, WatchedDirectories: watch}
	switch {
	case *legacyHold && *hold != "":
		return usage("-hold and -legacy-hold exclude each other")
	case *legacyHold:
		cfg.Hold = InitialHold{Holding: true}
	case *hold != "":
		cfg.Hold = InitialHold{Holding: true, Owner: *hold}
	}
	if *stage < 1 || *stage > 4 {
		return usage("-stage must be 1..4")
	}
	cfg.Unwired = Stage(*stage)
	for _, name := range splitList(*unwired) {
		if !cfg.Unwired.set(name) {
			return usage("unknown capability %q in -unwired", name)
		}
	}
	if *silentBuild {
		cfg.Unwired.OwnedBuild, cfg.Unwired.LegacyBuild = true, true
	}
	cfg.Unwired.AckWithoutOwner = *noOwner
	outcome, ok := parseOutcome(*accept)
	if !ok {
		return usage("unknown -accept outcome %q", *accept)
	}
	if outcome != AcceptSuccess || *acceptDelay > 0 {
		d := *acceptDelay
		cfg.Acceptance = func(ctx context.Context, _ string) Outcome {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			return outcome
		}
	}
	h, ok := ParseHandshake(*handshake)
	if !ok {
		return usage("unknown -handshake mode %q", *handshake)
	}
	cfg.Faults = Faults{Handshake: h, HandshakeDelay: *hsDelay, DisconnectAfterHandshake: *discHS, RST: *rst}
	if p := *discOn; p != "" {
		cfg.Faults.DisconnectOn = func(l string) bool { return strings.HasPrefix(l, p) }
	}
	if states := splitList(*reject); len(states) > 0 {
		for _, st := range states {
			if st != "started" && st != "ok" && st != "failed" {
				return usage("unknown BUILD state %q in -reject", st)
			}
		}
		cfg.Faults.RejectBuild = func(state, _ string) bool { return contains(states, state) }
	}
	var hooks []ReplyFunc
	for _, fl := range []struct {
		name, list string
		f          ReplyFunc
	}{{"-drop-reply", *dropReply, DropReply}, {"-wrong-token", *wrongToken, WrongToken}} {
		for _, spec := range splitList(fl.list) {
			h, ok := replySpec(spec, fl.f)
			if !ok {
				return usage("unknown reply %q in %s", spec, fl.name)
			}
			hooks = append(hooks, h)
		}
	}
	correlated := []Kind{KindBuild, KindReload, KindDoctor, KindVerify}
	if *wrongFirst {
		hooks = append(hooks, ForKind(WrongTokenFirst, correlated...))
	}
	if *delayReply > 0 {
		hooks = append(hooks, ForKind(DelayReply(*delayReply), correlated...))
	}
	cfg.Faults.Reply = Chain(hooks...)

	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "fakeagent: opening command log: %v\n", err)
			return 1
		}
		defer f.Close()
		var mu sync.Mutex
		cfg.OnCommand = func(_ int, line string) {
			mu.Lock()
			defer mu.Unlock()
			io.WriteString(f, line+"\n")
		}
	}
	cfg.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }

	s, err := Start(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "fakeagent: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "fakeagent: listening on %s\n", s.Addr())
	if *useStdin {
		eof := make(chan struct{})
		go func() {
			io.Copy(io.Discard, stdin)
			close(eof)
		}()
		select {
		case <-ctx.Done():
		case <-eof:
		}
	} else {
		<-ctx.Done()
	}
	s.Close()
	fmt.Fprintf(stdout, "accepted=%d\n", s.Accepted())
	return 0
}

// WaitPortMain is a testscript command "waitport PATH [TIMEOUT]": it waits
// until PATH holds a port number (default timeout 10s) and returns 0, or
// prints why not and returns 1.
func WaitPortMain(args []string) int {
	if len(args) < 1 || len(args) > 2 {
		fmt.Fprintln(os.Stderr, "usage: waitport PATH [TIMEOUT]")
		return 2
	}
	timeout := 10 * time.Second
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		if err != nil {
			fmt.Fprintf(os.Stderr, "waitport: %v\n", err)
			return 2
		}
		timeout = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := WaitPortFile(ctx, args[0]); err != nil {
		fmt.Fprintf(os.Stderr, "waitport: %v\n", err)
		return 1
	}
	return 0
}

// WaitPortFile polls path until it holds a port number, bounded by ctx.
func WaitPortFile(ctx context.Context, path string) (int, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && p > 0 {
				return p, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("waiting for port file %s: %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}

// replySpec applies f to the replies named by spec: a kind (BUILD, RELOAD,
// DOCTOR, VERIFY, PENDING, HEALTH, DIAGNOSE) or BUILD:<state>.
func replySpec(spec string, f ReplyFunc) (ReplyFunc, bool) {
	kind, state, _ := strings.Cut(spec, ":")
	k := Kind(strings.ToUpper(kind))
	switch {
	case !validKind(k) || state != "" && k != KindBuild:
		return nil, false
	case k != KindBuild:
		return ForKind(f, k), true
	case state == "":
		return ForBuild(f), true
	}
	state = strings.ToLower(state)
	if state != "started" && state != "ok" && state != "failed" {
		return nil, false
	}
	return ForBuild(f, state), true
}

// set marks the named capability unwired; it reports false for an unknown name.
func (u *Unwired) set(name string) bool {
	switch name {
	case "verifier":
		u.Verifier = true
	case "diagnoser":
		u.Diagnoser = true
	case "scanner":
		u.Scanner = true
	case "health":
		u.Health = true
	case "owned-build":
		u.OwnedBuild = true
	case "legacy-build":
		u.LegacyBuild = true
	case "doctor-context":
		u.DoctorContext = true
	case "reload-control":
		u.ReloadControl = true
	default:
		return false
	}
	return true
}

// parseOutcome maps an -accept spelling to its Outcome.
func parseOutcome(s string) (Outcome, bool) {
	for o := AcceptSuccess; o <= AcceptSuperseded; o++ {
		if o.String() == s {
			return o, true
		}
	}
	return 0, false
}

func validKind(k Kind) bool {
	switch k {
	case KindBuild, KindReload, KindDoctor, KindVerify, KindPending, KindHealth, KindDiagnose:
		return true
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
