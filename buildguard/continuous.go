package buildguard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/integrations/gradle"
	"github.com/buildguard/buildguard/internal/cycle"
)

// CycleOutcome is how one cycle of a continuous build ended.
type CycleOutcome int

const (
	// CycleOK: the cycle's build succeeded and the agent acknowledged
	// `BUILD ok` (unless CycleReport.Err says otherwise).
	CycleOK CycleOutcome = iota
	// CycleFailed: the cycle's build failed (or its Gradle JVM went away
	// before it reported an end); `BUILD failed` keeps the output held.
	CycleFailed
	// CycleRefused: `BUILD started` was not acknowledged, so the init
	// script failed the cycle before any of its tasks ran.
	CycleRefused
	// CycleStopped: the run ended while the cycle ran; `BUILD failed` keeps
	// its output held.
	CycleStopped
)

func (o CycleOutcome) String() string {
	switch o {
	case CycleOK:
		return "ok"
	case CycleFailed:
		return "failed"
	case CycleRefused:
		return "refused"
	}
	return "stopped"
}

// CycleReport is one finished cycle of a continuous build.
type CycleReport struct {
	// N is the cycle's number in the run, from 1.
	N int
	// Outcome is how the cycle ended.
	Outcome CycleOutcome
	// Duration runs from the cycle's start request to its end.
	Duration time.Duration
	// Released reports that the agent acknowledged `BUILD ok`: the cycle's
	// output (and any output held since the last released cycle) reaches
	// the application.
	Released bool
	// Err is why the start was refused (a *RefusalError) or why the end
	// was not confirmed (an *UnconfirmedError); nil otherwise.
	Err error
}

// ContinuousRun is how a continuous run ended.
type ContinuousRun struct {
	// Cycles is the number of cycles that asked to start.
	Cycles int
	// Held reports that, as far as the agent confirmed, output is held for
	// this run's owner at the end: the last cycle that took the hold did
	// not end with an acknowledged `BUILD ok`.
	Held bool
}

// RunContinuous guards a continuous Gradle build cycle by cycle
// (docs/decisions.md#D20). argv must pass cycle.Check; otherwise the error
// wraps ErrInvalidOption and nothing is printed or connected.
//
// Like Run, it prints the owner line and connects to the agent once, for
// the whole run, but takes no hold yet. It applies the cycle init script to
// the command and supervises the command as Run does (the same Runner, the
// same signals, grace and process-group rules). Each cycle the script
// reports is one guarded build: `BUILD started` acknowledged before the
// script lets any task of the cycle run (a start that is not acknowledged
// fails the cycle before its tasks), then `BUILD ok` when the cycle
// succeeded, `BUILD failed` otherwise. report, when not nil, receives each
// finished cycle.
//
// The run ends when the command exits, on a signal or ctx (the command's
// process group is ended as Run does) or when the agent connection is lost
// (the command is terminated). A cycle in flight then ends with
// `BUILD failed`. The exit code is the command's own, or 1 when it exited 0
// while output stays held; signals and unconfirmed ends give the errors Run
// gives.
func (g *Guard) RunContinuous(ctx context.Context, argv []string, report func(CycleReport)) (ContinuousRun, int, error) {
	var run ContinuousRun
	if err := cycle.Check(argv); err != nil {
		return run, 0, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	if report == nil {
		report = func(CycleReport) {}
	}
	c := g.cfg
	g.announce()
	transcript, err := g.check()
	if err != nil {
		return run, 0, err
	}
	if transcript != nil {
		defer transcript.Close()
		c.Transcript = transcript
	}
	go warmStart()
	sigs := g.catchSignals()
	defer sigs.release()

	agent, sig, err := g.open(ctx, sigs, false)
	if agent != nil {
		defer agent.Close()
	}
	switch {
	case sig != nil:
		return run, 0, &InterruptedError{Signal: sig}
	case err != nil:
		return run, 0, err
	}

	// The script waits for the agent's acknowledgement through us, which
	// takes up to one Timeout, and for our answer; before both, for the
	// cycle's turn in the project's build queue.
	wait := 2*c.Timeout + 5*time.Second
	if c.Admit != nil {
		wait += cycleTurnWait
	}
	ch, err := cycle.Open(cycle.Config{
		Script: gradle.CyclesInitScript,
		Wait:   wait,
		Logger: g.log.Named("cycles"),
	})
	if err != nil {
		return run, 0, &RefusalError{Stage: "Cannot open the cycle channel", Problem: err}
	}
	defer ch.Close()
	return g.runCycles(ctx, c, argv, agent, ch, sigs, report)
}

// runCycles starts the continuous command with the cycle channel's
// arguments and serves its cycles until the command ends, then concludes
// the run.
func (g *Guard) runCycles(ctx context.Context, c Config, argv []string, agent Agent, ch *cycle.Channel, sigs caught, report func(CycleReport)) (ContinuousRun, int, error) {
	var run ContinuousRun
	// The command outlives every cycle's turn: its processes are not a
	// cycle's to record (Config.Started).
	c.Started = nil
	r, typed := g.newRunner(c, ch.Argv(argv))
	defer r.Close()
	if s := pendingInterrupt(sigs.c); s != nil {
		return run, 0, &InterruptedError{Signal: s}
	}
	if err := r.Start(); err != nil {
		r.Close()
		g.log.Warn("the build command could not be started", "error", err)
		return run, 127, err
	}

	sess := newSession(g, agent, r)
	sess.drain()
	// runCtx ends the command when the agent connection is lost.
	runCtx, endRun := context.WithCancel(ctx)
	defer endRun()
	loopCtx, stopLoop := context.WithCancel(context.Background())
	defer stopLoop()
	go func() {
		select {
		case <-sess.lost:
			g.log.Warn("the agent connection was lost; stopping the continuous build")
			endRun()
		case <-loopCtx.Done():
		}
	}()
	st := &cycles{report: report}
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		defer cleanUpOnPanic(func() { r.Close() })
		st.serve(loopCtx, ch, sess)
	}()

	code, sig, werr := g.supervise(runCtx, r, sigs.c, typed)
	r.Close() // restores the terminal before anything more is printed
	stopLoop()
	<-loopDone
	ch.Close()
	g.log.Debug("continuous build exited", "code", code, "cycles", st.n)
	return g.concludeCycles(ctx, c, st, sess, code, sig, werr)
}

// concludeCycles ends a cycle still in flight with `BUILD failed`, and says
// how the run ended: the command's code, the signal or ctx that ended it,
// and every end the agent did not confirm.
func (g *Guard) concludeCycles(ctx context.Context, c Config, st *cycles, sess *session, code int, sig os.Signal, werr error) (ContinuousRun, int, error) {
	var run ContinuousRun
	var unsafe []error
	if st.unconfirmed {
		unsafe = append(unsafe, errors.New("the end of a cycle was not acknowledged by the agent"))
	}
	if st.inFlight != 0 {
		// The run ended mid-cycle: the cycle failed.
		err := sess.build(ctx, agentproto.BuildFailed)
		rep := CycleReport{N: st.inFlight, Outcome: CycleStopped, Duration: time.Since(st.begin)}
		if err != nil {
			rep.Err = &UnconfirmedError{State: agentproto.BuildFailed, Err: err}
			unsafe = append(unsafe, rep.Err)
		}
		st.held = true
		st.report(rep)
	}
	st.releaseTurn()
	sess.stop()
	run.Cycles, run.Held = st.n, st.held

	if lerr := sess.lostError(); lerr != nil {
		// First: it is why the ends above were not acknowledged.
		unsafe = append([]error{fmt.Errorf("the agent connection was lost (%w), so the continuous build was stopped", lerr)}, unsafe...)
	}
	var left *StragglersError
	switch {
	case errors.As(werr, &left):
		g.log.Info("processes of the build were still running after the grace period; killed them", "grace", c.Grace)
	case werr != nil:
		g.log.Error("waiting for the build failed", "error", werr)
		unsafe = append(unsafe, werr)
	}
	var uerr error
	if len(unsafe) > 0 {
		// Every reason on one line: the run's end is one stderr line
		// (docs/decisions.md#D20).
		uerr = join(": ", ErrUnsafe, join("; ", unsafe...))
	}
	switch {
	case sig != nil:
		return run, code, &InterruptedError{Signal: sig, Ran: true, Err: uerr}
	case ctx.Err() != nil:
		return run, code, &InterruptedError{Ran: true, Err: join("\n", ctx.Err(), uerr)}
	case uerr != nil:
		return run, 1, uerr
	case code == 0 && run.Held:
		return run, 1, nil
	}
	return run, code, nil
}

// cycles is the state of a run's cycles. serve owns it while it runs; the
// run reads it after serve returned.
type cycles struct {
	report func(CycleReport)

	n           int       // cycles that asked to start
	inFlight    int       // the cycle whose start was acknowledged and whose end is not; 0 none
	begin       time.Time // when inFlight asked to start
	release     func()    // gives the cycle's turn in the project's queue back; nil when none is taken
	held        bool      // output is held for this owner, as far as the agent confirmed
	unconfirmed bool      // some cycle's end was not acknowledged
}

// serve answers the init script's cycles until ctx ends, the channel is
// closed or the agent connection is lost (the run then ends).
// cycleTurnWait bounds how long a cycle waits for its turn in the
// project's build queue; the init script waits as long for the answer to
// the cycle's start. A cycle whose turn does not come fails before its
// tasks run.
const cycleTurnWait = 10 * time.Minute

// admit waits for the cycle's turn in the project's build queue
// (Config.Admit, docs/decisions.md#D20), at most cycleTurnWait. The turn is
// kept until releaseTurn, after the cycle's end was told to the agent.
func (st *cycles) admit(ctx context.Context, g *Guard) error {
	if g.cfg.Admit == nil {
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, cycleTurnWait)
	defer cancel()
	_, release, err := g.cfg.Admit(actx)
	if err != nil {
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no turn within %v: %w", cycleTurnWait, err)
		}
		return err
	}
	st.release = release
	return nil
}

// releaseTurn gives the cycle's turn in the queue back, once.
func (st *cycles) releaseTurn() {
	if st.release != nil {
		st.release()
		st.release = nil
	}
}

func (st *cycles) serve(ctx context.Context, ch *cycle.Channel, s *session) {
	for {
		cy, err := ch.Next(ctx)
		if err != nil {
			return
		}
		st.n++
		n, begin := st.n, time.Now()
		if err := st.admit(ctx, s.g); err != nil {
			rerr := &RefusalError{Stage: "Cannot take a turn in the project's build queue", Problem: err}
			if err := cy.Refuse(fmt.Sprintf("cycle %d: %v", n, rerr)); err != nil {
				s.g.log.Debug("telling the init script of the refusal failed", "error", err)
			}
			st.report(CycleReport{N: n, Outcome: CycleRefused, Duration: time.Since(begin), Err: rerr})
			if ctx.Err() != nil {
				return
			}
			continue
		}
		if err := s.g.startHold(ctx, func() error { return s.build(ctx, agentproto.BuildStarted) }); err != nil {
			st.refuseStart(ctx, s, cy, n, begin, err)
			if s.lostError() != nil {
				return
			}
			continue
		}
		st.inFlight, st.begin, st.held = n, begin, true
		if err := cy.Ack(n); err != nil {
			s.g.log.Debug("acknowledging the cycle to the init script failed; it fails the cycle", "error", err)
		}
		res, err := cy.Result(ctx)
		if err != nil {
			cy.Close()
			return // the run is ending: it reports the cycle in flight
		}
		state, outcome := agentproto.BuildFailed, CycleFailed
		if res == cycle.OK {
			state, outcome = agentproto.BuildOK, CycleOK
		}
		ferr := s.build(ctx, state)
		if ferr != nil && state == agentproto.BuildOK {
			if err := s.build(ctx, agentproto.BuildFailed); err != nil {
				s.g.log.Debug("best-effort BUILD failed after the lost ok", "error", err)
			}
		}
		st.inFlight = 0
		rep := CycleReport{N: n, Outcome: outcome, Duration: time.Since(begin)}
		switch {
		case ferr != nil:
			st.unconfirmed = true
			rep.Err = &UnconfirmedError{State: state, Err: ferr}
		case state == agentproto.BuildOK:
			rep.Released, st.held = true, false
		}
		st.releaseTurn()
		if err := cy.Finish(n, rep.Released); err != nil {
			s.g.log.Debug("telling the init script of the cycle's end failed", "error", err)
		}
		st.report(rep)
		if s.lostError() != nil {
			return
		}
	}
}

// refuseStart ends cycle n, whose `BUILD started` was not acknowledged
// (err), before any of its tasks runs. Unless the agent rejected it, the
// agent may have taken the hold although its acknowledgement never came:
// `BUILD failed` follows on the connection (docs/decisions.md#D21), and the
// output counts as held for this owner; a `BUILD failed` not acknowledged
// either makes the run's end unconfirmed.
func (st *cycles) refuseStart(ctx context.Context, s *session, cy *cycle.Cycle, n int, begin time.Time, err error) {
	rerr := refusedStart(err)
	rerr.Stage = "BUILD started was not acknowledged"
	if !errors.Is(err, agentproto.ErrRejected) {
		st.held = true
		if ferr := s.build(ctx, agentproto.BuildFailed); ferr != nil {
			st.unconfirmed = true
			rerr.After = fmt.Sprintf("then BUILD failed was not acknowledged either (%v): if the agent took the hold, it keeps the output held for this owner until a cycle succeeds", ferr)
		} else {
			rerr.After = "then BUILD failed was acknowledged: if the agent took the hold after all, it keeps the output held for this owner until a cycle succeeds"
		}
	}
	st.releaseTurn()
	if err := cy.Refuse(fmt.Sprintf("cycle %d: %v", n, rerr)); err != nil {
		s.g.log.Debug("telling the init script of the refusal failed", "error", err)
	}
	st.report(CycleReport{N: n, Outcome: CycleRefused, Duration: time.Since(begin), Err: rerr})
}

// session is a continuous run's one agent connection: read and dropped
// between requests (as Run does while its command runs), used by one
// request at a time. Only one goroutine at a time calls build and stop.
type session struct {
	g     *Guard
	agent Agent
	r     Runner

	stopFn func() // stops the current drain; nil when none runs

	mu      sync.Mutex
	lost    chan struct{} // closed once the connection failed
	lostErr error
}

func newSession(g *Guard, agent Agent, r Runner) *session {
	return &session{g: g, agent: agent, r: r, lost: make(chan struct{})}
}

// drain starts reading the connection; a connection that ends is recorded
// and closes s.lost.
func (s *session) drain() {
	d, ok := s.agent.(drainer)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cleanUpOnPanic(func() { s.r.Close() })
		if err := d.Discard(ctx); err != nil {
			s.g.log.Warn("the agent connection failed", "error", err)
			s.setLost(err)
		}
	}()
	s.stopFn = func() {
		cancel()
		<-done
	}
}

func (s *session) setLost(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostErr == nil {
		s.lostErr = err
		close(s.lost)
	}
}

// lostError is why the connection was lost, or nil.
func (s *session) lostError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lostErr
}

// stop stops reading the connection.
func (s *session) stop() {
	if s.stopFn != nil {
		s.stopFn()
		s.stopFn = nil
	}
}

// build sends `BUILD state` and waits for its acknowledgement (within
// Timeout, also after ctx ended: the agent must hear how a cycle began and
// ended), then goes back to draining.
func (s *session) build(ctx context.Context, state string) error {
	s.stop()
	if err := s.lostError(); err != nil {
		return err
	}
	err := s.g.finish(ctx, s.agent, state)
	if errors.Is(err, agentproto.ErrDisconnected) || errors.Is(err, agentproto.ErrIO) {
		s.setLost(err)
		return err
	}
	s.drain()
	return err
}
