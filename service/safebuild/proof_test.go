//go:build unix

package safebuild

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/fakeagent"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// requireProven requires an ok build whose changedClasses list exactly the
// classes with the hashes of texts, all applied, the search complete.
func requireProven(t *testing.T, res *Result, texts map[string]string) {
	t.Helper()
	if res.Outcome != OutcomeOK {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	cc := res.ChangedClasses
	if !cc.AllApplied || !cc.Complete || cc.Count != len(texts) || len(cc.Classes) != len(texts) {
		t.Fatalf("changedClasses %+v, want %d classes proven: %s", cc, len(texts), res.Detail)
	}
	for _, c := range cc.Classes {
		if text, ok := texts[c.ClassName]; !ok || c.SHA256 != sum(text) || c.Status != agentproto.ReceiptApplied {
			t.Errorf("class %+v, want one of %v applied with the built bytes", c, texts)
		}
	}
}

// requireUnproven requires an ok build whose allApplied is false, with the
// reason in the detail.
func requireUnproven(t *testing.T, res *Result, reason string) {
	t.Helper()
	if res.Outcome != OutcomeOK {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Detail)
	}
	if res.ChangedClasses.AllApplied || res.ChangedClasses.Complete {
		t.Errorf("changedClasses %+v claims a proof", res.ChangedClasses)
	}
	if !strings.Contains(res.Detail, reason) {
		t.Errorf("detail %q does not say %q", res.Detail, reason)
	}
}

// requireOKNotApplied requires an ok build whose search was complete and
// whose allApplied is false, with the reason in the detail.
func requireOKNotApplied(t *testing.T, res *Result, reason string) {
	t.Helper()
	if res.Outcome != OutcomeOK || !res.ChangedClasses.Complete || res.ChangedClasses.AllApplied {
		t.Fatalf("outcome %s, complete %v, allApplied %v: %s", res.Outcome, res.ChangedClasses.Complete, res.ChangedClasses.AllApplied, res.Detail)
	}
	if !strings.Contains(res.Detail, reason) {
		t.Errorf("detail %q does not say %q", res.Detail, reason)
	}
}

// Without a complete search there is no proof: no DOCTOR evidence, or an
// agent that watches nothing, is allApplied false with the reason, not an
// empty proof (docs/decisions.md#D21).
func TestRunNoProofWithoutTheWatchedDirectories(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		ev     fakeagent.Evidence
		reason string
	}{
		"doctor-unavailable": {fakeagent.Evidence{Unavailable: true}, "DOCTOR evidence is unavailable"},
		"watches-nothing":    {fakeagent.Evidence{}, "watches no directory"},
		"watcher-starting":   {fakeagent.Evidence{WatcherState: fakeagent.WatcherStarting}, "watcher is starting"},
		"sample-only":        {fakeagent.Evidence{WatchedDirectories: []string{"/nonexistent/a"}, WatchedDirectoryCount: 12}, "watches 12 directories and named only 1"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fakeagent.WithDoctor(tc.ev))
			res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1"))
			requireUnproven(t, res, tc.reason)
		})
	}
}

// A watched directory that does not exist before the build (a first build,
// or after clean) is searched after it: every class in it is new.
func TestRunFindsClassesInADirectoryTheBuildCreated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := os.RemoveAll(f.classes); err != nil {
		t.Fatal(err)
	}
	res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1", "app.B=v2"))
	requireProven(t, res, map[string]string{"app.A": "v1", "app.B": "v2"})
}

// A watched directory the agent names through a symlink, or relative to its
// working directory, is searched where it really is.
func TestRunFindsClassesInSymlinkedAndRelativeDirectories(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"symlink", "relative"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			named := filepath.Join(f.dir, "classes-link")
			if err := os.Symlink(f.classes, named); err != nil {
				t.Fatal(err)
			}
			if name == "relative" {
				named = "build/classes"
			}
			f.agent.SetDoctor(fakeagent.Evidence{WatchedDirectories: []string{named}, WorkingDirectory: f.dir})
			res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1"))
			requireProven(t, res, map[string]string{"app.A": "v1"})
		})
	}
}

// A watched directory named through a symlink, that does not exist before
// the build, is one directory after it: each class it gets is one changed
// class, not one per name. The link's target is there before the build (the
// directory resolves as far as it exists) or the build makes it good (each
// directory is resolved again when it is searched).
func TestRunFindsClassesOnceInADirectoryTheBuildCreatedBehindASymlink(t *testing.T) {
	t.Parallel()
	for name, linkMadeGood := range map[string]bool{"target-exists": false, "link-made-good": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			removed := f.classes
			if linkMadeGood {
				removed = filepath.Dir(f.classes)
			}
			if err := os.RemoveAll(removed); err != nil {
				t.Fatal(err)
			}
			alias := filepath.Join(f.dir, "alias")
			if err := os.Symlink(filepath.Dir(f.classes), alias); err != nil {
				t.Fatal(err)
			}
			f.agent.SetDoctor(fakeagent.Evidence{WatchedDirectories: []string{filepath.Join(alias, filepath.Base(f.classes))}})
			res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1"))
			requireProven(t, res, map[string]string{"app.A": "v1"})
		})
	}
}

// realPath resolves what exists of a path and keeps the rest as spelled; a
// dangling link is kept as spelled, a loop is an error.
func TestRealPath(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"alias": real, "dangling": filepath.Join(dir, "nowhere"), "loop": filepath.Join(dir, "loop")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		dir + "/alias":               real,
		dir + "/alias/build/classes": real + "/build/classes",
		dir + "/real/build":          real + "/build",
		dir + "/dangling/classes":    dir + "/dangling/classes",
		dir + "/no/such/dir":         dir + "/no/such/dir",
	} {
		if got, err := realPath(path); err != nil || got != want {
			t.Errorf("realPath(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if got, err := realPath(dir + "/loop/classes"); err == nil {
		t.Errorf("realPath through a symlink loop = %q, want an error", got)
	}
}

// A class file rewritten with the same size and modification time is a
// changed class: what the times cannot tell, the file's change time or its
// content does.
func TestRunFindsARewriteThatKeepsSizeAndTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := filepath.Join(f.classes, "app", "A.class")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("AAAA"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	res := f.builder.Run(context.Background(), f.request(t, "rewrite", path, "BBBB"))
	requireProven(t, res, map[string]string{"app.A": "BBBB"})
}

// What is verified is what the build wrote, hashed before BUILD ok: a class
// file rewritten while the verification runs (an IDE compiling), or
// replaced by a named pipe, changes nothing and blocks nothing
// (docs/decisions.md#D13).
func TestRunVerifiesTheBytesTheBuildWrote(t *testing.T) {
	t.Parallel()
	for name, replace := range map[string]func(path string) error{
		"rewritten": func(path string) error { return os.WriteFile(path, []byte("later bytes"), 0o644) },
		"fifo": func(path string) error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return syscall.Mkfifo(path, 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var f *fixture
			var once sync.Once
			// Once the agent applied the build's batch (its first applied
			// receipt), B.class is replaced.
			f = newFixture(t, fakeagent.WithFaults(fakeagent.Faults{Reply: fakeagent.ForKind(func(r *fakeagent.Reply) {
				if !strings.Contains(r.Message, `"status":"applied"`) {
					return
				}
				once.Do(func() {
					if err := replace(filepath.Join(f.classes, "app", "B.class")); err != nil {
						t.Error(err)
					}
				})
			}, fakeagent.KindVerify)}))
			done := make(chan *Result, 1)
			go func() {
				done <- f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1", "app.B=v2"))
			}()
			select {
			case res := <-done:
				requireProven(t, res, map[string]string{"app.A": "v1", "app.B": "v2"})
			case <-time.After(30 * time.Second):
				t.Fatal("the build's verification did not end within 30 s")
			}
		})
	}
}

// The scan of the watched directories ends with its context, and says so.
func TestScanHonoursItsContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "A.class"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	snap := scan(ctx, []watchedDir{{named: dir, root: dir}}, true)
	if len(snap.problems) == 0 || !strings.Contains(snap.problems[0], "ran out of time") {
		t.Errorf("problems %q, want the search cut short", snap.problems)
	}
}

// A named pipe with a class file's name in a watched directory is never
// opened for reading: the build ends, and the search says it could not
// read that class.
func TestRunFIFOInAWatchedDirectoryNeverBlocks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := syscall.Mkfifo(filepath.Join(f.classes, "P.class"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Result, 1)
	go func() { done <- f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1")) }()
	select {
	case res := <-done:
		requireUnproven(t, res, "P.class is not a regular file")
	case <-time.After(30 * time.Second):
		t.Fatal("the build did not end within 30 s")
	}
}

// changes: a file the first snapshot did not see is changed unless its
// change time is clearly older than that snapshot (its directory was only
// watched after it); a file it saw is changed when its stamp or, for a
// file hashed then, its content differs.
func TestChangesUsesStampsAndChangeTimes(t *testing.T) {
	t.Parallel()
	at := time.Now()
	old := at.Add(-time.Hour).UnixNano()
	fresh := at.Add(time.Second).UnixNano()
	file := func(class string, mtime, ctime int64) classFile {
		return classFile{class: class, stamp: stamp{size: 1, mtime: mtime, ctime: ctime, ino: 7}}
	}
	before := snapshot{at: at, files: map[string]classFile{
		"/w/Same.class":    file("Same", old, old),
		"/w/Touched.class": file("Touched", old, old),
	}}
	after := snapshot{at: at.Add(2 * time.Second), files: map[string]classFile{
		"/w/Same.class":          file("Same", old, old),
		"/w/Touched.class":       file("Touched", old, fresh), // rewritten, mtime restored
		"/w/New.class":           file("New", fresh, fresh),
		"/late/OldThere.class":   file("OldThere", old, old), // in a directory watched only after the build
		"/late/JustBefore.class": file("JustBefore", old, at.Add(-time.Second).UnixNano()),
	}}
	var got []string
	for _, c := range changes(context.Background(), before, after) {
		got = append(got, c.class)
	}
	if want := "JustBefore New Touched"; strings.Join(got, " ") != want {
		t.Errorf("changed %q, want %q", got, want)
	}
}

// The scan after a build hashes no file, however many the build rewrote:
// only the MaxVerifiedClasses files that are verified are read
// (docs/performance.md#5), and what they hold is what the build wrote.
func TestSearchAfterHashesOnlyWhatIsVerified(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dirs := []watchedDir{{named: dir, root: dir}}
	n := MaxVerifiedClasses + 20
	write := func(content string) {
		for i := range n {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("C%04d.class", i)), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("old")
	before := scan(context.Background(), dirs, true)
	write("new!") // every file changed, within recentWindow of the next scan
	after := scan(context.Background(), dirs, false)
	for path, f := range after.files {
		if f.stamp.sum != "" {
			t.Fatalf("the scan after the build hashed %s", path)
		}
	}
	changed := changes(context.Background(), before, after)
	if len(changed) != n {
		t.Fatalf("%d changed, want %d", len(changed), n)
	}
	want := fmt.Sprintf("%x", sha256.Sum256([]byte("new!")))
	for i, c := range changed {
		switch {
		case i < MaxVerifiedClasses && (c.sum != want || c.err != nil):
			t.Errorf("%s: sum %q (%v), want the bytes the build wrote", c.class, c.sum, c.err)
		case i >= MaxVerifiedClasses && c.sum != "":
			t.Errorf("%s beyond the verified %d was hashed", c.class, MaxVerifiedClasses)
		}
	}
}

// The search has a budget of its own: when it is spent, the proof is
// incomplete and the build still ends ok, never late or timed out.
func TestRunSearchBudgetMakesTheProofIncompleteNotTheBuildLate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.builder = New(Config{VerifyWait: time.Nanosecond, Grace: 500 * time.Millisecond, Env: f.builder.cfg.Env})
	res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1"))
	requireUnproven(t, res, "the search ran out of time")
}

// Stop (a signal to the server) ends a verification that waits for an agent
// that does not answer at once, not after the verification's whole wait.
func TestStopEndsTheVerification(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeagent.WithFaults(fakeagent.Faults{Reply: fakeagent.ForKind(fakeagent.DropReply, fakeagent.KindVerify)}))
	f.builder = New(Config{VerifyWait: time.Minute, Grace: 500 * time.Millisecond, Env: f.builder.cfg.Env})
	done := make(chan *Result, 1)
	go func() { done <- f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1")) }()
	if _, err := f.agent.WaitCommand(wait.Context(t, 10*time.Second), "VERIFY "); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { f.builder.Stop(); close(stopped) }()
	select {
	case res := <-done:
		<-stopped
		if res.Outcome != OutcomeOK || res.ChangedClasses.AllApplied {
			t.Errorf("outcome %s changedClasses %+v", res.Outcome, res.ChangedClasses)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stop did not end the verification within 20 s")
	}
}

// classArgs is n compile arguments app.C000=v1 … in name order.
func classArgs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("app.C%03d=v%d", i, i)
	}
	return out
}

// Every changed class up to what the agent keeps receipts for is verified,
// not only those listed: 512 changed classes are proven, and the result
// lists MaxChangedClasses of them (docs/decisions.md#D24).
func TestRunVerifiesEveryChangedClassUpTo512(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.builder.Run(context.Background(), f.request(t, append([]string{"compile", f.classes}, classArgs(MaxVerifiedClasses)...)...))
	cc := res.ChangedClasses
	if res.Outcome != OutcomeOK || !cc.AllApplied || !cc.Complete || cc.Count != MaxVerifiedClasses || len(cc.Classes) != MaxChangedClasses {
		t.Fatalf("outcome %s changedClasses count %d complete %v allApplied %v listed %d: %s",
			res.Outcome, cc.Count, cc.Complete, cc.AllApplied, len(cc.Classes), res.Detail)
	}
	if want := "all 512 changed classes were verified"; !strings.Contains(res.Detail, want) {
		t.Errorf("detail %q does not say %q", res.Detail, want)
	}
	for i, c := range cc.Classes {
		if name := fmt.Sprintf("app.C%03d", i); c.ClassName != name || c.Status != agentproto.ReceiptApplied || c.SHA256 != sum(fmt.Sprintf("v%d", i)) {
			t.Errorf("classes[%d] = %+v, want %s applied with its built bytes", i, c, name)
		}
	}
	verified := map[string]bool{}
	for _, l := range f.agent.Commands() {
		if parts := strings.Fields(l); len(parts) == 4 && parts[0] == "VERIFY" {
			verified[parts[2]] = true
		}
	}
	if len(verified) != MaxVerifiedClasses {
		t.Errorf("the agent was asked VERIFY for %d classes, want all %d", len(verified), MaxVerifiedClasses)
	}
}

// More changed classes than an agent keeps receipts for cannot be proven:
// the answer says so and names which were verified, the ones written last,
// whose receipts the agent keeps, so each of them is proven applied.
func TestRunMoreThan512ChangedClassesSaysWhichWereVerified(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.builder = New(Config{VerifyWait: 30 * time.Second, Grace: 500 * time.Millisecond, Env: f.builder.cfg.Env})
	start := time.Now()
	res := f.builder.Run(context.Background(), f.request(t, append([]string{"compile", f.classes}, classArgs(600)...)...))
	elapsed := time.Since(start)
	requireOKNotApplied(t, res, "600 classes changed, more than the 512 an agent keeps receipts for, so no agent can prove them all: the 512 written last (by name app.C088 to app.C599) were verified, the other 88 were not")
	// The agent admitted the 600 as one batch and kept the newest 512
	// receipts (docs/agent-protocol.md#8): C000 to C087 were evicted, and
	// those are the ones not verified.
	if strings.Contains(res.Detail, "not applied") || strings.Contains(res.Detail, "not_observed") {
		t.Errorf("detail %q: the classes verified are those the agent kept, every one applied", res.Detail)
	}
	cc := res.ChangedClasses
	if cc.Count != 600 || len(cc.Classes) != MaxChangedClasses || cc.Classes[0].ClassName != "app.C088" || cc.Classes[0].Status != agentproto.ReceiptApplied {
		t.Errorf("changedClasses count %d, listed %d, first %+v; want 600, 64, app.C088 applied", cc.Count, len(cc.Classes), cc.Classes[0])
	}
	// A generous bound, far below the verification's 30 s wait.
	if elapsed > 10*time.Second {
		t.Errorf("the answer took %v: it waited for receipts that cannot change", elapsed)
	}
}

// An agent whose verifier is not wired ignores VERIFY: the answer says so at
// once instead of waiting the verification's whole time.
func TestRunVerifierNotWiredIsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fakeagent.WithUnwired(fakeagent.Unwired{Verifier: true}))
	f.builder = New(Config{VerifyWait: 30 * time.Second, Grace: 500 * time.Millisecond, Env: f.builder.cfg.Env})
	start := time.Now()
	res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1"))
	elapsed := time.Since(start)
	requireOKNotApplied(t, res, "none of the 1 classes could be verified: the agent's verifier is not wired (DOCTOR verifySupported is false), so it answers no VERIFY")
	if strings.Contains(res.Detail, "classes verified") {
		t.Errorf("detail %q says classes were verified, but no VERIFY was sent", res.Detail)
	}
	if c := res.ChangedClasses.Classes; len(c) != 1 || c[0].Status != "unavailable" || !strings.Contains(c[0].Detail, "verifier is not wired") {
		t.Errorf("classes %+v, want app.A unavailable because the verifier is not wired", c)
	}
	// A generous bound, far below the verification's 30 s wait.
	if elapsed > 10*time.Second {
		t.Errorf("the answer took %v: it waited for receipts that cannot come", elapsed)
	}
}

// BenchmarkProof measures the time from BUILD ok reaching the fake agent to
// the answer, for builds that change 1 and 512 classes (rewritten with new
// bytes each run), all verified and applied.
func BenchmarkProof(b *testing.B) {
	for _, n := range []int{1, MaxVerifiedClasses} {
		b.Run(fmt.Sprintf("classes=%d", n), func(b *testing.B) {
			var mu sync.Mutex
			var okAt time.Time
			f := newFixture(b, fakeagent.WithConfigFunc(func(c *fakeagent.Config) {
				c.OnCommand = func(_ int, line string) {
					if strings.HasPrefix(line, "BUILD ok ") {
						mu.Lock()
						okAt = time.Now()
						mu.Unlock()
					}
				}
			}))
			var total time.Duration
			for i := 0; i < b.N; i++ {
				args := []string{"compile", f.classes}
				for j := range n {
					args = append(args, fmt.Sprintf("app.C%03d=run%d-%d", j, i, j))
				}
				res := f.builder.Run(context.Background(), f.request(b, args...))
				mu.Lock()
				total += time.Since(okAt)
				mu.Unlock()
				if !res.ChangedClasses.AllApplied || res.ChangedClasses.Count != n {
					b.Fatalf("run %d: changedClasses count %d allApplied %v: %s", i, res.ChangedClasses.Count, res.ChangedClasses.AllApplied, res.Detail)
				}
			}
			b.ReportMetric(float64(total)/float64(time.Millisecond)/float64(b.N), "ms-after-build-ok")
		})
	}
}

// scriptedAgent answers RELOAD status and VERIFY by round: a round is the
// VERIFYs of one VerifyAll, and the RELOAD status asked before it.
type scriptedAgent struct {
	round    int
	settled  func(round int) bool
	statuses func(round int, class string) string
}

func (s *scriptedAgent) Reload(context.Context, string) (*agentproto.ReloadState, error) {
	if s.settled(s.round + 1) {
		return &agentproto.ReloadState{Action: agentproto.ReloadStatus, BuildHold: "none"}, nil
	}
	return &agentproto.ReloadState{Action: agentproto.ReloadStatus, BuildHold: "named", PendingClasses: 2}, nil
}

func (s *scriptedAgent) VerifyAll(_ context.Context, queries []agentproto.VerifyQuery, got func(int, *agentproto.Receipt) error) (int, error) {
	s.round++
	for i, q := range queries {
		if err := got(i, &agentproto.Receipt{SessionID: "s", ClassName: q.Class, ExpectedSHA256: q.SHA256, Status: s.statuses(s.round, q.Class)}); err != nil {
			return i, err
		}
	}
	return -1, nil
}

// not_observed is final only once the agent settled: it holds nothing,
// has nothing pending and none of the build's receipts is running, in two
// rounds in a row. Before that it is asked again.
func TestVerifyClassesTakesNotObservedAsFinalOnlyOnceTheAgentSettled(t *testing.T) {
	t.Parallel()
	changed := []changedFile{{class: "app.A", sum: sum("a")}, {class: "app.B", sum: sum("b")}}
	for name, tc := range map[string]struct {
		agent   *scriptedAgent
		want    string // statuses of A and B
		settled int
	}{
		"held, then applied": {&scriptedAgent{
			settled: func(r int) bool { return r > 3 },
			statuses: func(r int, _ string) string {
				return map[bool]string{true: agentproto.ReceiptNotObserved, false: agentproto.ReceiptApplied}[r <= 3]
			},
		}, "applied applied", 0},
		"released, one running, then applied": {&scriptedAgent{
			settled: func(int) bool { return true },
			statuses: func(r int, class string) string {
				switch {
				case class == "app.A" && r <= 3:
					return agentproto.ReceiptRunning
				case class == "app.B" && r <= 4:
					return agentproto.ReceiptNotObserved
				}
				return agentproto.ReceiptApplied
			},
		}, "applied applied", 0},
		// Between releasing the hold and starting the batch, the agent
		// looks settled for a moment: one round is not enough.
		"released, batch not started yet": {&scriptedAgent{
			settled: func(int) bool { return true },
			statuses: func(r int, _ string) string {
				return map[bool]string{true: agentproto.ReceiptNotObserved, false: agentproto.ReceiptApplied}[r == 1]
			},
		}, "applied applied", 0},
		"released, never observed": {&scriptedAgent{
			settled: func(int) bool { return true },
			statuses: func(_ int, class string) string {
				return map[bool]string{true: agentproto.ReceiptApplied, false: agentproto.ReceiptNotObserved}[class == "app.A"]
			},
		}, "applied not_observed", 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			v := verifyClasses(ctx, tc.agent, changed)
			got, settled := v.receipts, v.settled
			if ctx.Err() != nil {
				t.Fatal("the verification ran to its deadline")
			}
			if s := got[0].Status + " " + got[1].Status; s != tc.want || settled != tc.settled {
				t.Errorf("statuses %q, %d settled; want %q, %d", s, settled, tc.want, tc.settled)
			}
		})
	}
}

// A verification that ends before every receipt is final says why in the
// detail, not only in the classes: its wait ran out (the agent stopped
// answering VERIFY), or a VERIFY failed (the agent went away).
func TestRunVerificationEndedEarlySaysWhy(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		closeAgent bool
		reason     string
	}{
		"stops answering": {false, "the wait for receipts ended before every receipt was final"},
		"goes away":       {true, "the verification ended at a VERIFY that failed: "},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var f *fixture
			var once sync.Once
			f = newFixture(t, fakeagent.WithFaults(fakeagent.Faults{Reply: fakeagent.ForKind(func(r *fakeagent.Reply) {
				fakeagent.DropReply(r)
				if tc.closeAgent {
					once.Do(func() { go f.agent.Close() })
				}
			}, fakeagent.KindVerify)}))
			f.builder = New(Config{VerifyWait: 2 * time.Second, Grace: 500 * time.Millisecond, Env: f.builder.cfg.Env})
			res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1", "app.B=v2"))
			requireOKNotApplied(t, res, tc.reason)
		})
	}
}
