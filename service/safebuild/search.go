package safebuild

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/internal/boundedfile"
)

// The search for changed classes (docs/safe-build.md#8): the agent's
// watched directories from DOCTOR; before the hold, the kernel asked to
// report every change in them (watch_linux.go) or, where it cannot, a
// snapshot of their class files; right after the command exited 0 (before
// BUILD ok) the class files the kernel named, or another snapshot; and the
// changed files hashed then, so that what is verified is what the build
// wrote. Every reason the search may have missed a class is kept: the
// result claims a complete search only when there is none
// (docs/decisions.md#D21).

const (
	// maxScannedFiles bounds the class files of the watched directories,
	// maxScannedEntries everything the walk visits.
	maxScannedFiles   = 200000
	maxScannedEntries = 2000000
	// recentWindow is how close to a snapshot a file's change time must be
	// for its content to be hashed then: a file rewritten within the file
	// system's timestamp granularity can keep its size and times, and only
	// its content tells the change.
	recentWindow = 2 * time.Second
	// maxProblems bounds the reasons kept for an incomplete search.
	maxProblems = 8
)

// watchedDir is one directory the agent watches: as the agent named it, and
// the real directory searched (symlinks resolved, a relative name resolved
// against the agent's working directory).
type watchedDir struct {
	named, root string
}

// search is what is known about where the build's classes can be.
type search struct {
	dirs     []watchedDir
	problems []string // why the search may be incomplete; none when complete
	// noVerifier: the latest DOCTOR evidence says the agent's verifier is
	// not wired, so VERIFY is ignored (docs/agent-protocol.md#4.10)
	noVerifier bool
}

func (s *search) problem(format string, args ...any) {
	p := fmt.Sprintf(format, args...)
	if len(s.problems) < maxProblems && !slices.Contains(s.problems, p) {
		s.problems = append(s.problems, p)
	}
}

// addDoctor adds the directories of DOCTOR evidence (or the reason there
// are none) to the search. A directory is kept even when it does not exist
// yet: the build may create it, and every class in it is then new.
func (s *search) addDoctor(d *agentproto.Doctor, err error) {
	switch {
	case err != nil:
		s.problem("the agent's DOCTOR evidence could not be read (%v), so its watched directories are unknown", err)
		return
	case d.Status != agentproto.DoctorObserved:
		s.problem("the agent's DOCTOR evidence is unavailable (%s), so its watched directories are unknown", d.Detail)
		return
	}
	s.noVerifier = !d.VerifySupported
	switch {
	case d.WatcherState != "" && d.WatcherState != "watching":
		s.problem("the agent's watcher is %s, not watching", d.WatcherState)
	}
	if d.WatchSampleTruncated || d.WatchedDirectoryCount > len(d.WatchedDirectories) {
		s.problem("the agent watches %d directories and named only %d of them", d.WatchedDirectoryCount, len(d.WatchedDirectories))
	}
	if d.WatchedDirectoryCount == 0 && len(d.WatchedDirectories) == 0 && len(s.dirs) == 0 {
		s.problem("the agent watches no directory, so no class the build wrote can reach the JVM through it")
	}
	for _, named := range d.WatchedDirectories {
		s.add(named, d.WorkingDirectory)
	}
}

// add resolves one watched directory and adds it once.
func (s *search) add(named, workDir string) {
	path := named
	if !filepath.IsAbs(path) {
		if !filepath.IsAbs(workDir) {
			s.problem("the agent named the relative directory %q and no absolute working directory to resolve it against", named)
			return
		}
		path = filepath.Join(workDir, path)
	}
	root, err := realPath(filepath.Clean(path))
	if err != nil {
		s.problem("the watched directory %s cannot be resolved: %v", named, err)
		return
	}
	for _, d := range s.dirs {
		if d.root == root {
			return
		}
	}
	s.dirs = append(s.dirs, watchedDir{named: named, root: root})
}

// realPath is path with its symlinks resolved as far as it exists: the real
// path of its deepest existing ancestor joined with the rest. A directory
// that does not exist yet is then spelled the same before the build and
// after it, when it exists and resolves whole.
func realPath(path string) (string, error) {
	var rest []string
	for p := path; ; {
		real, err := filepath.EvalSymlinks(p)
		switch {
		case err == nil:
			slices.Reverse(rest)
			return filepath.Join(append([]string{real}, rest...)...), nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		case filepath.Dir(p) == p:
			return path, nil
		}
		rest = append(rest, filepath.Base(p))
		p = filepath.Dir(p)
	}
}

// stamp identifies one version of a file without reading it: size, times
// and identity; a content hash when the file changed too recently for its
// times to tell.
type stamp struct {
	size         int64
	mtime, ctime int64 // ns; ctime 0 where the system has none
	dev, ino     uint64
	sum          string // set when hashed at the snapshot
}

func (a stamp) sameFile(b stamp) bool {
	return a.size == b.size && a.mtime == b.mtime && a.ctime == b.ctime && a.dev == b.dev && a.ino == b.ino
}

type classFile struct {
	class string
	stamp stamp
}

// snapshot is the class files of the watched directories at one moment,
// or, with watch, the moment the kernel started reporting their changes
// (and no files).
type snapshot struct {
	files map[string]classFile // by path
	// roots are the directories scanned for files, whether they existed
	// or not: a class file beneath one that files lacks is new.
	roots    []string
	problems []string // why it may miss some
	at       time.Time
	watch    *watch
}

// holds reports whether path is beneath a directory the snapshot scanned.
func (s snapshot) holds(path string) bool {
	return slices.ContainsFunc(s.roots, func(root string) bool { return within(root, path) })
}

// noteBefore is what the search notes of dirs before the hold, within ctx:
// a watch of their changes where the kernel can report every one
// (startWatch), else a scan of their class files.
func noteBefore(ctx context.Context, dirs []watchedDir) snapshot {
	if w := startWatch(ctx, dirs); w != nil {
		return snapshot{at: w.start, watch: w}
	}
	return scan(ctx, dirs, true)
}

// changedSince is the class files of dirs the build changed since before,
// within ctx, ordered as changes orders them, with every reason the search
// may have missed one, and, when before was a watch whose report was
// incomplete, why the full search replaced it (lost). That full search
// knows no file from before the build: each class file whose change time
// is not older than recentWindow before the watch started is changed,
// each the kernel's events still named (the class files of a directory
// moved into the trees keep their older times), and each beneath a watched
// directory whose path holds another directory after the build.
func changedSince(ctx context.Context, before snapshot, dirs []watchedDir) (changed []changedFile, problems []string, lost string) {
	w := before.watch
	if w != nil {
		changed, problems, lost = w.changes(ctx, dirs)
		if lost == "" {
			return changed, problems, ""
		}
		before = snapshot{at: before.at, roots: w.replacedRoots()}
	}
	after := scan(ctx, dirs, false)
	changed = changedIn(ctx, before, after)
	if w != nil {
		found := make(map[string]bool, len(changed))
		for _, c := range changed {
			found[c.path] = true
		}
		changed = append(changed, w.besides(ctx, found)...)
	}
	return ordered(ctx, changed), append(append(problems, before.problems...), after.problems...), lost
}

// scan walks the watched directories for class files within ctx. With
// hashRecent, files changed within recentWindow of the scan are hashed
// (bounded reads, as docs/decisions.md#D13 reads every file): the snapshot
// before the build needs them to tell a rewrite that kept size and times.
// The snapshot after it hashes nothing: changes hashes the files it
// verifies, at most MaxVerifiedClasses, whatever the build rewrote. A
// directory that does not exist is empty; one that cannot be read, an entry
// named like a class file that is not a regular file, the bound of
// maxScannedFiles or the end of ctx make the snapshot incomplete. The
// directories of a tree are read by up to scanWorkers goroutines at once
// (a scan is a system call per entry, which the kernel serves on every
// core), and what they found is taken in the order of a walk by name, so
// that the snapshot and its problems are those of one walk.
func scan(ctx context.Context, dirs []watchedDir, hashRecent bool) snapshot {
	return scanWith(ctx, dirs, hashRecent, scanFaults{open: openScanDir})
}

func scanWith(ctx context.Context, dirs []watchedDir, hashRecent bool, faults scanFaults) snapshot {
	snap := snapshot{files: map[string]classFile{}, at: time.Now()}
	s := &search{}
	walked := map[string]bool{}
	var entries atomic.Int64
	for _, dir := range dirs {
		if ctx.Err() != nil {
			s.problem("the search ran out of time before %s was read", dir.named)
			continue
		}
		// A directory named through a link the build made good resolves
		// now to one another name may already have walked.
		if real, err := realPath(dir.root); err == nil {
			dir.root = real
		}
		if walked[dir.root] {
			continue
		}
		walked[dir.root] = true
		snap.roots = append(snap.roots, dir.root)
		fi, err := os.Lstat(dir.root)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			s.problem("%s could not be read: %v", dir.root, err)
			continue
		case !fi.IsDir():
			continue // no class file beneath it
		}
		root, err := faults.open(nil, ".", dir.root)
		if err != nil {
			s.problem("%s could not be read: %v", dir.root, err)
			continue
		}
		t := &treeScan{ctx: ctx, dir: dir, hashRecent: hashRecent, at: snap.at, entries: &entries, sem: make(chan struct{}, scanWorkers-1), root: root, open: faults.open, files: map[string]classFile{}}
		top := &dirScan{path: dir.root, rel: "."}
		done := make(chan struct{})
		go func() {
			defer close(done)
			t.read(top)
			t.wg.Wait()
			root.Close() // here: a read left behind may still use it
		}()
		select {
		case <-done:
		case <-ctx.Done():
		}
		select {
		case <-done:
			top.take(s)
			t.take(&snap, s)
		default:
			// A read that hangs (a stuck network file system) is left
			// behind with what it found.
			s.problem("the search ran out of time while reading %s", dir.named)
		}
	}
	snap.problems = s.problems
	return snap
}

// scanWorkers bounds the directories of a tree a scan reads at once.
const scanWorkers = 4

// scanFaults are the faults a test injects in a scan.
type scanFaults struct {
	// open opens a directory the scan reads (openScanDir).
	open func(root *os.File, rel, path string) (*os.File, error)
}

// treeScan is the scan of one watched directory's tree.
type treeScan struct {
	ctx        context.Context
	dir        watchedDir
	hashRecent bool
	at         time.Time
	entries    *atomic.Int64 // every entry of the scan's trees so far
	sem        chan struct{} // a slot for each goroutine beside the first
	wg         sync.WaitGroup
	root       *os.File // the tree's top directory, open
	open       func(root *os.File, rel, path string) (*os.File, error)
	mu         sync.Mutex
	files      map[string]classFile // the tree's class files, by path; under mu
}

// dirScan is what a scan found in one directory: its problems in the
// order of their names, and its subdirectories.
type dirScan struct {
	path     string
	rel      string // path relative to the tree's top
	problems []string
	subdirs  []*dirScan
}

// read reads the directory of d, then each of its subdirectories in a
// goroutine of its own while a slot is free, else in turn.
func (t *treeScan) read(d *dirScan) {
	if !t.list(d) {
		return
	}
	for _, sub := range d.subdirs {
		select {
		case t.sem <- struct{}{}:
			t.wg.Go(func() {
				defer func() { <-t.sem }()
				t.read(sub)
			})
		default:
			t.read(sub)
		}
	}
}

// list reads the entries of d's directory by name: its class files and
// subdirectories; false when the scan ends there. The directory is closed
// before its subdirectories are read, so that a deep tree holds one
// descriptor a goroutine.
func (t *treeScan) list(d *dirScan) bool {
	dir, err := t.open(t.root, d.rel, d.path)
	var list []fs.DirEntry
	if err == nil {
		defer dir.Close()
		list, err = dir.ReadDir(-1)
		slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	if err != nil {
		d.problems = append(d.problems, fmt.Sprintf("%s could not be read: %v", d.path, err))
	}
	for _, e := range list {
		switch {
		case t.ctx.Err() != nil:
			d.problems = append(d.problems, fmt.Sprintf("the search ran out of time while reading %s", t.dir.named))
			return false
		case t.entries.Add(1) > maxScannedEntries:
			d.problems = append(d.problems, fmt.Sprintf("the watched directories hold more than %d entries", maxScannedEntries))
			return false
		case e.IsDir():
			d.subdirs = append(d.subdirs, &dirScan{path: filepath.Join(d.path, e.Name()), rel: filepath.Join(d.rel, e.Name())})
		case !strings.HasSuffix(e.Name(), ".class"):
		case !t.file(d, dir, e):
			return false
		}
	}
	return true
}

// file notes the class file of entry e of d, or its problem; false when
// the tree holds more class files than a scan takes.
func (t *treeScan) file(d *dirScan, dir *os.File, e fs.DirEntry) bool {
	path := filepath.Join(d.path, e.Name())
	class, ok := className(t.dir.root, path)
	switch {
	case !ok: // module-info, package-info
		return true
	case !e.Type().IsRegular():
		d.problems = append(d.problems, fmt.Sprintf("%s is not a regular file (%v), so its class cannot be read", path, e.Type()))
		return true
	}
	st, err := entryStamp(dir, e)
	if err != nil {
		d.problems = append(d.problems, fmt.Sprintf("%s could not be read: %v", path, err))
		return true
	}
	if t.hashRecent && recent(st, t.at) {
		st.sum, _ = hashFile(t.ctx, path) // unreadable now: compared by times only
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.files) >= maxScannedFiles {
		d.problems = append(d.problems, fmt.Sprintf("the watched directories hold more than %d class files", maxScannedFiles))
		return false
	}
	t.files[path] = classFile{class: class, stamp: st}
	return true
}

// take adds the problems of d and its subdirectories to s, in the order
// of a walk by name.
func (d *dirScan) take(s *search) {
	for _, p := range d.problems {
		s.problem("%s", p)
	}
	for _, sub := range d.subdirs {
		sub.take(s)
	}
}

// take adds the tree's class files to snap, up to maxScannedFiles in all:
// a file another tree of the scan holds already stays as that tree found
// it.
func (t *treeScan) take(snap *snapshot, s *search) {
	if len(snap.files) == 0 {
		snap.files = t.files
		return
	}
	for path, f := range t.files {
		if len(snap.files) >= maxScannedFiles {
			s.problem("the watched directories hold more than %d class files", maxScannedFiles)
			return
		}
		if _, seen := snap.files[path]; !seen {
			snap.files[path] = f
		}
	}
}

// recent reports whether a file changed within recentWindow of t.
func recent(st stamp, t time.Time) bool {
	newest := max(st.mtime, st.ctime)
	return t.UnixNano()-newest < int64(recentWindow)
}

// className is the binary name of the class file at path under root, and
// whether it is one (not module-info or package-info).
func className(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return "", false
	}
	class := strings.ReplaceAll(strings.TrimSuffix(rel, ".class"), string(filepath.Separator), ".")
	return class, agentproto.ValidClassName(class)
}

// changedFile is a class file the build wrote, with the hash of what it
// wrote (or why it could not be read).
type changedFile struct {
	class, path string
	changed     int64 // ns: the later of its modification and change time
	sum         string
	err         error
}

// changes lists the class files of after that are new or differ from
// before, sorted by class name (then path): by size, times and identity,
// and by content where those are equal but the file had just changed at the
// first snapshot (and was hashed then). A file the first snapshot did not
// see in a directory it did not scan (watched only later) whose change time
// is older than that snapshot was not written by the build. The first MaxVerifiedClasses
// are those verified: when more changed, the ones written last (by change
// time, then binary name), since an agent keeps the receipts of the classes
// it reloaded last (docs/agent-protocol.md#8); they come first, by name,
// and are hashed now, within ctx, unless after hashed them already: what
// the build wrote is what is verified.
func changes(ctx context.Context, before, after snapshot) []changedFile {
	return ordered(ctx, changedIn(ctx, before, after))
}

// changedIn is the class files of after that are new or differ from
// before, in no order, none hashed unless after hashed it. A file new
// beneath a directory before scanned is new whatever its times (a
// directory moved in keeps its files' times); one beneath a directory
// before did not scan is new only when it changed since recentWindow
// before before.at.
func changedIn(ctx context.Context, before, after snapshot) []changedFile {
	var out []changedFile
	if len(before.files) == 0 {
		out = make([]changedFile, 0, len(after.files)) // every file may be new
	}
	for path, f := range after.files {
		b, existed := before.files[path]
		if !existed && !before.holds(path) && before.at.UnixNano()-max(f.stamp.mtime, f.stamp.ctime) >= int64(recentWindow) {
			continue
		}
		if existed && b.stamp.sameFile(f.stamp) {
			if b.stamp.sum == "" {
				continue
			}
			sum, err := hashFile(ctx, path)
			if err != nil || sum == b.stamp.sum {
				continue
			}
		}
		out = append(out, changedFile{class: f.class, path: path, changed: max(f.stamp.mtime, f.stamp.ctime), sum: f.stamp.sum})
	}
	return out
}

// ordered is the changed files out, the MaxVerifiedClasses verified first
// (the ones written last when more changed), each group by name, and those
// verified hashed within ctx, by up to scanWorkers goroutines at once.
func ordered(ctx context.Context, out []changedFile) []changedFile {
	byName := func(a, b changedFile) int {
		return cmp.Or(strings.Compare(a.class, b.class), strings.Compare(a.path, b.path))
	}
	if len(out) > MaxVerifiedClasses {
		slices.SortFunc(out, func(a, b changedFile) int { // written last first
			if c := cmp.Compare(b.changed, a.changed); c != 0 {
				return c
			}
			return byName(b, a)
		})
	}
	verified := out[:min(len(out), MaxVerifiedClasses)]
	slices.SortFunc(verified, byName)
	slices.SortFunc(out[len(verified):], byName)
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(scanWorkers, len(verified)) {
		wg.Go(func() {
			for i := range next {
				verified[i].sum, verified[i].err = hashFile(ctx, verified[i].path)
			}
		})
	}
	for i := range verified {
		if verified[i].sum == "" {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return out
}

// hashFile hashes the class file at path as docs/decisions.md#D13 reads
// every file: a regular file only (never a wait on a named pipe), at most
// boundedfile.ClassFileLimit bytes, and given up when ctx ends (a read that
// hangs, as on a stuck network file system, is left behind).
func hashFile(ctx context.Context, path string) (string, error) {
	type result struct {
		sum string
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := boundedfile.SHA256(path, boundedfile.ClassFileLimit)
		done <- result{sum, err}
	}()
	select {
	case r := <-done:
		return r.sum, r.err
	case <-ctx.Done():
		return "", fmt.Errorf("reading %s: %w", path, ctx.Err())
	}
}

// within reports whether path is root or beneath it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
