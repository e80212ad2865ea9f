package safebuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// watchFixture makes a watched directory holding app/A.class; settled, it
// waits until that file changed more than recentWindow ago, as the output
// of an earlier build: the wait is for the clock itself, since no file's
// change time can be set back.
func watchFixture(t *testing.T, settled bool) (root string, dirs []watchedDir) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "classes")
	writeFile(t, filepath.Join(root, "app", "A.class"), "AAAA")
	if settled {
		time.Sleep(recentWindow + 100*time.Millisecond)
	}
	return root, []watchedDir{{named: root, root: root}}
}

// startTestWatch is newWatch with limits, which must watch dirs.
func startTestWatch(t *testing.T, dirs []watchedDir, limits watchLimits) *watch {
	t.Helper()
	w := newWatch(context.Background(), dirs, limits)
	if w == nil {
		t.Fatalf("the kernel was not asked to watch %v", dirs)
	}
	t.Cleanup(w.close)
	return w
}

// hasClass reports whether class is one of changed.
func hasClass(changed []changedFile, class string) bool {
	return slices.ContainsFunc(changed, func(c changedFile) bool { return c.class == class })
}

// Before the hold the search asks the kernel to watch the directories and
// notes no class file: no file's metadata is read, whatever the project's
// size (docs/performance.md#5).
func TestNoteBeforeWatchesAndListsNoFile(t *testing.T) {
	t.Parallel()
	_, dirs := watchFixture(t, false)
	before := noteBefore(context.Background(), dirs)
	defer before.watch.close()
	if before.watch == nil || len(before.files) != 0 || len(before.problems) != 0 {
		t.Fatalf("before the hold: watch %v, %d files noted, problems %q; want a watch and no file", before.watch != nil, len(before.files), before.problems)
	}
}

// A class written into a package directory the build creates, nested or
// not, is found: each new directory is read once its watch is set, so
// what was written before the watch is not missed, whether the events are
// read while the build runs or only after it.
func TestWatchFindsClassesInDirectoriesTheBuildCreates(t *testing.T) {
	t.Parallel()
	for name, unread := range map[string]bool{"read-while-building": false, "read-after-the-build": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, dirs := watchFixture(t, false)
			w := startTestWatch(t, dirs, watchLimits{unread: unread})
			writeFile(t, filepath.Join(root, "app", "sub", "deep", "B.class"), "B")
			writeFile(t, filepath.Join(root, "app", "two", "C.class"), "C")
			writeFile(t, filepath.Join(root, "app", "two", "C$1.class"), "C1")
			writeFile(t, filepath.Join(root, "app", "D.class"), "D")
			writeFile(t, filepath.Join(root, "app", "two", "module-info.class"), "M")
			changed, problems, lost := w.changes(context.Background(), dirs)
			if lost != "" || len(problems) > 0 {
				t.Fatalf("lost %q, problems %q", lost, problems)
			}
			if got, want := classNames(changed), "app.D app.sub.deep.B app.two.C app.two.C$1"; got != want {
				t.Errorf("changed %q, want %q", got, want)
			}
		})
	}
}

// A class file renamed into place, as Gradle and javac may write one (from
// outside the watched tree, from a temporary name beside it, over the
// class it replaces), is a changed class.
func TestWatchFindsAClassRenamedIntoPlace(t *testing.T) {
	t.Parallel()
	for name, place := range map[string]func(t *testing.T, root, outside string) error{
		"from-outside": func(t *testing.T, root, outside string) error {
			writeFile(t, filepath.Join(outside, "A.class"), "BBBB")
			return os.Rename(filepath.Join(outside, "A.class"), filepath.Join(root, "app", "A.class"))
		},
		"from-a-temporary-name": func(t *testing.T, root, _ string) error {
			writeFile(t, filepath.Join(root, "app", "A.class.tmp"), "BBBB")
			return os.Rename(filepath.Join(root, "app", "A.class.tmp"), filepath.Join(root, "app", "A.class"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, dirs := watchFixture(t, false)
			outside := filepath.Join(filepath.Dir(root), "tmp")
			w := startTestWatch(t, dirs, watchLimits{})
			if err := place(t, root, outside); err != nil {
				t.Fatal(err)
			}
			changed, problems, lost := w.changes(context.Background(), dirs)
			if lost != "" || len(problems) > 0 {
				t.Fatalf("lost %q, problems %q", lost, problems)
			}
			if got := classNames(changed); got != "app.A" {
				t.Errorf("changed %q, want app.A", got)
			}
		})
	}
}

// A class file opened for writing and closed unwritten is not a changed
// class; a rewrite that keeps the file's size and times is.
func TestWatchTellsAWriteFromAnOpen(t *testing.T) {
	t.Parallel()
	root, dirs := watchFixture(t, true)
	w := startTestWatch(t, dirs, watchLimits{})
	a := filepath.Join(root, "app", "A.class")
	f, err := os.OpenFile(a, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	b := filepath.Join(root, "app", "B.class")
	writeFile(t, b, "BBBB")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(b, old, old); err != nil {
		t.Fatal(err)
	}
	changed, problems, lost := w.changes(context.Background(), dirs)
	if lost != "" || len(problems) > 0 {
		t.Fatalf("lost %q, problems %q", lost, problems)
	}
	if got := classNames(changed); got != "app.B" {
		t.Errorf("changed %q, want app.B only", got)
	}
}

// When the kernel's queue of events overflows, its report is incomplete:
// the full search replaces it, and finds the class written last, whose
// events the kernel dropped (with what changed within recentWindow before
// the watch started, which it cannot tell from the build's).
func TestWatchOverflowFallsBackToTheFullSearch(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("the kernel's queue size is unknown: %v", err)
	}
	queue, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || queue > 1<<20 {
		t.Skipf("a queue of %q events is too large to fill here", data)
	}
	root, dirs := watchFixture(t, false)
	w := startTestWatch(t, dirs, watchLimits{unread: true})
	// A write to each of two files in turn, an event each that the
	// kernel cannot merge with the one before: the queue fills.
	var noise [2]*os.File
	for i := range noise {
		if noise[i], err = os.Create(filepath.Join(root, "noise"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		defer noise[i].Close()
	}
	for i := range queue + 1 {
		if _, err := noise[i%2].Write([]byte{'x'}); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "app", "B.class"), "B")
	changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
	if !strings.Contains(lost, "queue of events overflowed") {
		t.Errorf("lost %q, want the queue's overflow", lost)
	}
	if !hasClass(changed, "app.B") || len(problems) > 0 {
		t.Errorf("changed %q (problems %q), want app.B found by the full search", classNames(changed), problems)
	}
}

// The kernel's limit of watches (ENOSPC): reached before the build, the
// search scans as where no kernel reports; reached at a directory the
// build creates, the full search replaces the report and finds the class
// written in it.
func TestWatchLimitFallsBackToTheFullSearch(t *testing.T) {
	t.Parallel()
	assertLimitFallsBack(t, watchLimits{maxWatches: 1}, watchLimits{maxWatches: 2}, "limit of watches")
}

// assertLimitFallsBack checks a bound on the watches: under refused, the
// fixture's two directories are not watched at all (the search scans, as
// where no kernel reports); under allowed they are, the directory the
// build creates goes past the bound, and the full search replaces the
// report (lost names wantLost) and finds the class written in it.
func assertLimitFallsBack(t *testing.T, refused, allowed watchLimits, wantLost string) {
	t.Helper()
	_, dirs := watchFixture(t, false)
	if w := newWatch(context.Background(), dirs, refused); w != nil {
		w.close()
		t.Errorf("two directories watched under %+v", refused)
	}
	root, dirs := watchFixture(t, false)
	w := startTestWatch(t, dirs, allowed)
	writeFile(t, filepath.Join(root, "app", "sub", "B.class"), "B")
	changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
	if !strings.Contains(lost, wantLost) {
		t.Errorf("lost %q, want %q", lost, wantLost)
	}
	if !hasClass(changed, "app.sub.B") || len(problems) > 0 {
		t.Errorf("changed %q (problems %q), want app.sub.B found by the full search", classNames(changed), problems)
	}
}

// A watched directory moved or deleted, a directory moved into the tree,
// or one swapped for a symlink makes the kernel's report incomplete: the
// full search replaces it, finds what was written, and follows no symlink
// the search does not follow (docs/safe-build.md#8).
func TestWatchLosesMovedDirectories(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		change func(t *testing.T, root, outside string) error
		want   string
	}{
		"moved": {func(t *testing.T, root, _ string) error {
			writeFile(t, filepath.Join(root, "app", "B.class"), "B")
			return os.Rename(filepath.Join(root, "app"), filepath.Join(root, "app2"))
		}, "app2.B"},
		"deleted": {func(t *testing.T, root, _ string) error {
			writeFile(t, filepath.Join(root, "lib", "C.class"), "C")
			return os.RemoveAll(filepath.Join(root, "app"))
		}, "lib.C"},
		"moved-in": {func(t *testing.T, root, outside string) error {
			writeFile(t, filepath.Join(outside, "pkg", "C.class"), "C")
			return os.Rename(filepath.Join(outside, "pkg"), filepath.Join(root, "pkg"))
		}, "pkg.C"},
		"swapped-for-a-symlink": {func(t *testing.T, root, outside string) error {
			writeFile(t, filepath.Join(outside, "app", "S.class"), "S")
			if err := os.Rename(filepath.Join(root, "app"), filepath.Join(outside, "old")); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(outside, "app"), filepath.Join(root, "app"))
		}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, dirs := watchFixture(t, false)
			outside := filepath.Join(filepath.Dir(root), "outside")
			w := startTestWatch(t, dirs, watchLimits{})
			if err := tc.change(t, root, outside); err != nil {
				t.Fatal(err)
			}
			changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
			if lost == "" {
				t.Errorf("the kernel's report is complete, want it lost")
			}
			if (tc.want != "" && !hasClass(changed, tc.want)) || hasClass(changed, "app.S") || len(problems) > 0 {
				t.Errorf("changed %q (problems %q), want %q found and nothing behind a symlink", classNames(changed), problems, tc.want)
			}
		})
	}
}

// A class file swapped for a symlink is not followed: the search says it
// cannot read that class. A symlink to a directory outside the tree is not
// watched through: what is written there is not in the watched tree.
func TestWatchNeverFollowsASymlink(t *testing.T) {
	t.Parallel()
	root, dirs := watchFixture(t, false)
	outside := filepath.Join(filepath.Dir(root), "outside")
	writeFile(t, filepath.Join(outside, "X.class"), "X")
	w := startTestWatch(t, dirs, watchLimits{})
	a := filepath.Join(root, "app", "A.class")
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "X.class"), a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "app", "linked")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(outside, "Y.class"), "Y")
	changed, problems, lost := w.changes(context.Background(), dirs)
	if lost != "" || len(changed) > 0 {
		t.Errorf("lost %q, changed %q; want a complete report of no class", lost, classNames(changed))
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "A.class is not a regular file") {
		t.Errorf("problems %q, want A.class unreadable", problems)
	}
	if slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "linked") }) {
		t.Errorf("problems %q name the linked directory", problems)
	}
}

// A directory the agent watches only after the build, outside the watched
// trees, is scanned: its classes written since the watch started are
// changed ones, older ones are not.
func TestWatchScansDirectoriesWatchedOnlyAfterTheBuild(t *testing.T) {
	t.Parallel()
	root, dirs := watchFixture(t, true)
	late := filepath.Join(filepath.Dir(root), "late")
	if err := os.Rename(filepath.Join(root, "app"), late); err != nil {
		t.Fatal(err)
	}
	w := startTestWatch(t, dirs, watchLimits{})
	writeFile(t, filepath.Join(late, "New.class"), "N")
	changed, problems, lost := w.changes(context.Background(), append(dirs, watchedDir{named: late, root: late}))
	if lost != "" || len(problems) > 0 {
		t.Fatalf("lost %q, problems %q", lost, problems)
	}
	if got := classNames(changed); got != "New" {
		t.Errorf("changed %q, want New (A.class is older)", got)
	}
}

// A safe build whose classes land in new package directories is proven
// from the kernel's report, not from a full search.
func TestRunFindsClassesTheKernelReported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writeFile(t, filepath.Join(f.classes, "app", "A.class"), "v0")
	log := &lockedBuffer{}
	f.builder.log = hclog.New(&hclog.LoggerOptions{Output: log, Level: hclog.Debug})
	res := f.builder.Run(context.Background(), f.request(t, "compile", f.classes, "app.A=v1", "app.sub.deep.B=v2"))
	requireProven(t, res, map[string]string{"app.A": "v1", "app.sub.deep.B": "v2"})
	if want := fmt.Sprintf("the kernel reported the build's changes: classes=%d", 2); !strings.Contains(log.String(), want) {
		t.Errorf("the log does not say %q:\n%s", want, log.String())
	}
}

// lockedBuffer is a buffer the builder's goroutines may log to at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A parent of a watched directory moved, and another directory put in its
// place, raises no event of the watch: the full search replaces the report.
func TestWatchLosesAParentMoved(t *testing.T) {
	t.Parallel()
	root, dirs := watchFixture(t, false)
	w := startTestWatch(t, dirs, watchLimits{})
	base := filepath.Dir(root)
	if err := os.Rename(base, base+".moved"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base + ".moved") })
	writeFile(t, filepath.Join(root, "app", "B.class"), "B")
	changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
	if !strings.Contains(lost, "is not the directory watched") {
		t.Errorf("lost %q, want the watched directory replaced", lost)
	}
	if !hasClass(changed, "app.B") || hasClass(changed, "app.A") || len(problems) > 0 {
		t.Errorf("changed %q (problems %q), want app.B only", classNames(changed), problems)
	}
}

// A search takes at most a quarter of the user's watches, which the
// agent's own watcher needs too: a tree with more directories is scanned
// before the build, and one that grows beyond during it is searched in
// full.
func TestWatchTakesAQuarterOfTheUsersWatches(t *testing.T) {
	t.Parallel()
	assertLimitFallsBack(t, watchLimits{maxUserWatches: 4}, watchLimits{maxUserWatches: 8}, "more than 2 directories")
}

// A changed class file with another hard link changed under every name,
// and no event named the others: the full search replaces the report and
// finds each name, whether the link was there before the build or the
// build made it.
func TestWatchSearchesInFullForAHardLinkedClass(t *testing.T) {
	t.Parallel()
	for name, before := range map[string]bool{"linked-before": true, "linked-by-the-build": false} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, dirs := watchFixture(t, false)
			a, b := filepath.Join(root, "app", "A.class"), filepath.Join(root, "lib", "B.class")
			link := func() {
				if err := os.MkdirAll(filepath.Dir(b), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(a, b); err != nil {
					t.Fatal(err)
				}
			}
			if before {
				link()
			}
			w := startTestWatch(t, dirs, watchLimits{})
			if !before {
				link()
			}
			if err := os.WriteFile(a, []byte("BBBB"), 0o644); err != nil {
				t.Fatal(err)
			}
			changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
			if !strings.Contains(lost, "hard links") {
				t.Errorf("lost %q, want the hard links", lost)
			}
			if !hasClass(changed, "app.A") || !hasClass(changed, "lib.B") || len(problems) > 0 {
				t.Errorf("changed %q (problems %q), want app.A and lib.B", classNames(changed), problems)
			}
		})
	}
}

// The report honours its context: when it has ended, the report is
// incomplete and the full search says it ran out of time, while the
// events of a build are still being read.
func TestWatchReportHonoursItsContext(t *testing.T) {
	t.Parallel()
	root, dirs := watchFixture(t, false)
	w := startTestWatch(t, dirs, watchLimits{})
	for i := range 200 {
		writeFile(t, filepath.Join(root, "app", fmt.Sprintf("p%d", i), "C.class"), "C")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, problems, lost := changedSince(ctx, snapshot{at: w.start, watch: w}, dirs)
	if !strings.Contains(lost, "ran out of time") {
		t.Errorf("lost %q, want the search out of time", lost)
	}
	if len(problems) == 0 || !strings.Contains(problems[0], "ran out of time") {
		t.Errorf("problems %q, want the search cut short", problems)
	}
}

// A directory moved into the watched trees, or renamed within them, brings
// class files whose times are older than the build (a rename changes no
// file's times): each is new at its name, and the full search that
// replaces the report counts it, and what is moved into the directory at
// its new name too.
func TestWatchCountsTheClassesOfADirectoryMovedIn(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		move func(root, outside string) error
		want []string
	}{
		"moved-in": {func(root, outside string) error {
			return os.Rename(filepath.Join(outside, "pkg"), filepath.Join(root, "pkg"))
		}, []string{"pkg.C", "pkg.sub.D"}},
		"renamed-within": {func(root, _ string) error {
			return os.Rename(filepath.Join(root, "app"), filepath.Join(root, "app2"))
		}, []string{"app2.A"}},
		"renamed-then-moved-into": {func(root, outside string) error {
			if err := os.Rename(filepath.Join(root, "app"), filepath.Join(root, "app2")); err != nil {
				return err
			}
			return os.Rename(filepath.Join(outside, "pkg"), filepath.Join(root, "app2", "pkg"))
		}, []string{"app2.A", "app2.pkg.C", "app2.pkg.sub.D"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			root, outside := filepath.Join(base, "classes"), filepath.Join(base, "outside")
			writeFile(t, filepath.Join(root, "app", "A.class"), "A")
			writeFile(t, filepath.Join(outside, "pkg", "C.class"), "C")
			writeFile(t, filepath.Join(outside, "pkg", "sub", "D.class"), "D")
			time.Sleep(recentWindow + 100*time.Millisecond) // files older than the build: see watchFixture
			dirs := []watchedDir{{named: root, root: root}}
			w := startTestWatch(t, dirs, watchLimits{})
			if err := tc.move(root, outside); err != nil {
				t.Fatal(err)
			}
			changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
			if !strings.Contains(lost, "was moved") {
				t.Errorf("lost %q, want the directory moved", lost)
			}
			if got, want := classNames(changed), strings.Join(tc.want, " "); got != want || len(problems) > 0 {
				t.Errorf("changed %q (problems %q), want %q", got, problems, want)
			}
		})
	}
}

// A file system mounted over a watched directory while the build runs
// raises no event, and what is written on it none of the directory's
// watch: the full search replaces the report. Mounting needs a mount
// namespace of its own, so the test runs itself again in one (as root).
func TestWatchLosesAFileSystemMountedOver(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	root, dirs := watchFixture(t, false)
	app := filepath.Join(root, "app")
	w := startTestWatch(t, dirs, watchLimits{})
	if err := unix.Mount("tmpfs", app, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(app, unix.MNT_DETACH) })
	writeFile(t, filepath.Join(app, "B.class"), "B")
	changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
	if !strings.Contains(lost, "mounted") {
		t.Errorf("lost %q, want the file system mounted", lost)
	}
	if !hasClass(changed, "app.B") || len(problems) > 0 {
		t.Errorf("changed %q (problems %q), want app.B found by the full search", classNames(changed), problems)
	}
}

// inMountNamespace reports whether the test runs in a mount namespace of
// its own, where it may mount file systems; when it does not, it runs the
// test again in one (as root; skipped otherwise) and reports its result.
func inMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv("BUILDGUARD_TEST_MOUNT_NAMESPACE") != "" {
		return true
	}
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("mounting a file system needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private",
		os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "BUILDGUARD_TEST_MOUNT_NAMESPACE=1")
	out, err := cmd.CombinedOutput()
	if errors.Is(err, exec.ErrNotFound) {
		t.Skipf("no unshare: %v", err)
	}
	if err != nil || !bytes.Contains(out, []byte("--- PASS")) {
		t.Fatalf("in a mount namespace of its own: %v\n%s", err, out)
	}
	return false
}

// An overlay's layers change beneath it without an event of its watch: a
// watched directory on one is scanned before and after the build, and a
// class rewritten in its upper layer is found.
func TestWatchScansAnOverlay(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lower, upper, work, root := filepath.Join(base, "lower"), filepath.Join(base, "upper"), filepath.Join(base, "work"), filepath.Join(base, "classes")
	writeFile(t, filepath.Join(upper, "app", "A.class"), "A")
	for _, dir := range []string{lower, work, root} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount("overlay", root, "overlay", 0, "lowerdir="+lower+",upperdir="+upper+",workdir="+work); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(root, unix.MNT_DETACH) })
	dirs := []watchedDir{{named: root, root: root}}
	before := noteBefore(context.Background(), dirs)
	defer before.watch.close()
	writeFile(t, filepath.Join(upper, "app", "A.class"), "AA")
	changed, problems, lost := changedSince(context.Background(), before, dirs)
	if before.watch != nil || !hasClass(changed, "app.A") || len(problems) > 0 || lost != "" {
		t.Errorf("watched %v: changed %q (problems %q, lost %q), want app.A found by two scans", before.watch != nil, classNames(changed), problems, lost)
	}
}

// A directory moved into the trees once the search's watches ran out is
// not read: the class files it brought, whose times are older than the
// build, cannot be told from others, and the search says so.
func TestWatchSaysADirectoryMovedInUnread(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside := filepath.Join(base, "classes"), filepath.Join(base, "outside")
	writeFile(t, filepath.Join(root, "app", "A.class"), "A")
	writeFile(t, filepath.Join(outside, "pkg", "C.class"), "C")
	time.Sleep(recentWindow + 100*time.Millisecond) // files older than the build: see watchFixture
	dirs := []watchedDir{{named: root, root: root}}
	w := startTestWatch(t, dirs, watchLimits{maxUserWatches: 8}) // root and app: the quarter
	writeFile(t, filepath.Join(root, "app", "sub", "B.class"), "B")
	if err := os.Rename(filepath.Join(outside, "pkg"), filepath.Join(root, "pkg")); err != nil {
		t.Fatal(err)
	}
	changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
	if !strings.Contains(lost, "more than 2 directories") {
		t.Errorf("lost %q, want the quarter of the user's watches", lost)
	}
	if !hasClass(changed, "app.sub.B") || len(problems) != 1 || !strings.Contains(problems[0], filepath.Join(root, "pkg")+" was moved into the watched directories and could not be read") {
		t.Errorf("changed %q (problems %q), want app.sub.B and %s said unread", classNames(changed), problems, filepath.Join(root, "pkg"))
	}
}

// A watched directory replaced by another at its path, as a build that
// moves a prebuilt output into place does, holds class files whose times
// are older than the build and whose names no event gave: each is new
// there, and the full search counts it, as the two scans would.
func TestWatchCountsEveryClassOfAReplacedDirectory(t *testing.T) {
	t.Parallel()
	root, dirs := watchFixture(t, false)
	prebuilt := filepath.Join(filepath.Dir(root), "prebuilt")
	writeFile(t, filepath.Join(prebuilt, "app", "P.class"), "P")
	time.Sleep(recentWindow + 100*time.Millisecond) // files older than the build: see watchFixture
	w := startTestWatch(t, dirs, watchLimits{})
	if err := os.Rename(root, root+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(prebuilt, root); err != nil {
		t.Fatal(err)
	}
	changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
	if lost == "" {
		t.Errorf("the kernel's report is complete, want it lost")
	}
	if got := classNames(changed); got != "app.P" || len(problems) > 0 {
		t.Errorf("changed %q (problems %q), want app.P", got, problems)
	}
}

// A parent of a watched directory moved while its watch starts, and
// another directory put in its place, raises no event of the watch: the
// directory at its path is not the one watched, the report is lost, and
// what the build writes there is found.
func TestWatchLosesADirectoryReplacedWhileWatched(t *testing.T) {
	t.Parallel()
	root, dirs := watchFixture(t, false)
	base := filepath.Dir(root)
	t.Cleanup(func() { os.RemoveAll(base + ".moved") })
	w := startTestWatch(t, dirs, watchLimits{watched: func(root string) {
		if err := os.Rename(base, base+".moved"); err != nil {
			t.Error(err)
		}
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Error(err)
		}
	}})
	writeFile(t, filepath.Join(root, "app", "B.class"), "B")
	changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
	if !strings.Contains(lost, "is not the directory watched") {
		t.Errorf("lost %q, want the watched directory replaced", lost)
	}
	if got := classNames(changed); got != "app.B" || len(problems) > 0 {
		t.Errorf("changed %q (problems %q), want app.B", got, problems)
	}
}

// TestWatchCoarsensWhenTheBuildWritesMuch: once the build wrote more class
// files than coarsen's rule allows, no watch follows a file's writes (the
// masks the kernel shows in fdinfo), the full search finds every class
// written before and after, and a directory moved in afterwards is still
// counted whole.
func TestWatchCoarsensWhenTheBuildWritesMuch(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside := filepath.Join(base, "classes"), filepath.Join(base, "outside")
	for i := range 16 {
		writeFile(t, filepath.Join(root, "app", fmt.Sprintf("C%02d.class", i)), "old")
	}
	writeFile(t, filepath.Join(outside, "pkg", "D.class"), "D")
	time.Sleep(recentWindow + 100*time.Millisecond) // files older than the build: see watchFixture
	dirs := []watchedDir{{named: root, root: root}}
	w := startTestWatch(t, dirs, watchLimits{coarseAfter: 2})
	if m := watchMasks(t, w.fd); len(m) != 2 || m[0]&unix.IN_CLOSE_WRITE == 0 {
		t.Fatalf("the watches' masks before the build are %x, want two following writes", m)
	}
	for i := range 4 {
		writeFile(t, filepath.Join(root, "app", fmt.Sprintf("C%02d.class", i)), "new")
	}
	wait.For(t, 10*time.Second, "the watches to follow no write", func() bool {
		m := watchMasks(t, w.fd)
		return len(m) == 2 && !slices.ContainsFunc(m, func(m uint32) bool { return m&(unix.IN_CLOSE_WRITE|unix.IN_MODIFY|unix.IN_ATTRIB) != 0 })
	})
	if err := os.Rename(filepath.Join(outside, "pkg"), filepath.Join(root, "pkg")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "app", "C10.class"), "new")
	changed, problems, lost := changedSince(context.Background(), snapshot{at: w.start, watch: w}, dirs)
	if !strings.Contains(lost, "wrote more than") {
		t.Errorf("lost %q, want the build's many writes", lost)
	}
	if got, want := classNames(changed), "app.C00 app.C01 app.C02 app.C03 app.C10 pkg.D"; got != want || len(problems) > 0 {
		t.Errorf("changed %q (problems %q), want %q", got, problems, want)
	}
}

// watchMasks is the mask of each watch of the inotify instance fd, as the
// kernel shows them in this process's fdinfo.
func watchMasks(t *testing.T, fd int) []uint32 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	var masks []uint32
	for line := range strings.Lines(string(data)) {
		for f := range strings.FieldsSeq(line) {
			if v, ok := strings.CutPrefix(f, "mask:"); ok && strings.HasPrefix(line, "inotify ") {
				m, err := strconv.ParseUint(v, 16, 32)
				if err != nil {
					t.Fatalf("fdinfo: %q", line)
				}
				masks = append(masks, uint32(m))
			}
		}
	}
	return masks
}
