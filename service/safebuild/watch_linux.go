package safebuild

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/buildguard/buildguard/service/buildqueue"
)

// The search for changed classes learns from the kernel what the build
// changed (docs/safe-build.md#8): before the hold every directory of the
// watched trees gets an inotify watch and is read (names and types, never
// a file's metadata); while the build runs a goroutine notes each class
// file an event names and watches each directory the build creates before
// reading it; after the build only the class files named are examined.
// Whatever makes the kernel's report incomplete (its queue overflowed, its
// limit of watches, a directory moved, deleted or moved in, an error) is
// noted, and the full search replaces the report (changedSince).

const (
	// watchEvents are the events of a watched directory the search
	// reads: a class file written, its attributes or times set, created,
	// renamed or linked into the directory, or closed after it was opened
	// for writing (a write through a shared mapping raises no other);
	// a directory created, moved or deleted; the watched directory itself
	// moved, deleted or unmounted.
	watchEvents = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE |
		unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	// treeEvents are the events of a watched directory that tell how the
	// tree changed, none about a file's contents: the mask once the build
	// wrote many class files (coarsen). No write to a file of a directory
	// watched so costs the writer anything.
	treeEvents = unix.IN_CREATE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	// coarseShare: once the build wrote more than MaxVerifiedClasses class
	// files and more than a coarseShare'th of the watched trees' entries,
	// the search stops following each write (coarsen).
	coarseShare = 8
	// writtenEvents are the events that make the class file they name a
	// changed one whatever its times; a file only closed after writing
	// must also have changed since recentWindow before the watch started.
	writtenEvents = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CREATE | unix.IN_MOVED_TO
	// inNewDirectory marks a class file found in a directory the build
	// created: every class file in it is new.
	inNewDirectory = 1 << 31
)

// localFileSystem reports whether magic is a file system whose every
// change on this machine the kernel reports to a watch, and that no other
// machine writes to; elsewhere (NFS, SMB, FUSE, a virtual machine's
// shared folder, an overlay, whose layers change beneath it without an
// event) a change can come without an event, and the search compares two
// scans.
func localFileSystem(magic int64) bool {
	switch magic {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, unix.RAMFS_MAGIC:
		return true
	}
	return false
}

// watchLimits are faults a test injects; the zero value injects none.
type watchLimits struct {
	// maxWatches is how many watches may be added before the next one
	// fails as the kernel fails it at max_user_watches (ENOSPC); 0: as many
	// as the kernel allows.
	maxWatches int
	// unread leaves the events unread until the build ended, so that a
	// build's events fill the kernel's queue.
	unread bool
	// maxUserWatches stands for fs.inotify.max_user_watches; 0: the
	// kernel's.
	maxUserWatches int
	// watched, when set, runs once each root is watched and read.
	watched func(root string)
	// coarseAfter stands for MaxVerifiedClasses in coarsen's rule; 0:
	// MaxVerifiedClasses.
	coarseAfter int
}

// watchShare is the part of the user's watches (fs.inotify.max_user_watches)
// a search takes at most: the agent's own watcher, which watches the same
// directories as the same user, needs as many for the directories the
// build creates.
const watchShare = 4

// defaultMaxUserWatches is fs.inotify.max_user_watches where it cannot be
// read: the smallest default of the kernels we run on.
const defaultMaxUserWatches = 8192

// watchBudget is how many directories a search may watch: a watchShare'th
// of limits.maxUserWatches or of the kernel's setting.
func watchBudget(limits watchLimits) int {
	n := limits.maxUserWatches
	if n == 0 {
		n = defaultMaxUserWatches
		if data, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
			if v, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && v > 0 {
				n = v
			}
		}
	}
	return n / watchShare
}

// watchedTree is a directory being watched: its path and the root of the
// watched tree its class files' binary names are relative to.
type watchedTree struct {
	path, root string
}

// watch is the kernel's report of the changes in the watched directories
// since start. One goroutine at a time uses it: startWatch, then read
// (while the build runs), then changes.
type watch struct {
	start  time.Time
	limits watchLimits
	ctx    context.Context // of startWatch while it reads; then none
	fd     int             // the inotify instance
	file   *os.File        // fd in the runtime's poller, for read's deadline
	closed sync.Once
	dirs   map[int]watchedTree
	roots  []string
	ids    []unix.Stat_t // each root's, when it was watched
	mounts string        // the mounts in the watched trees (mountsIn), when they were watched
	budget int           // the directories it may watch (watchBudget)
	// named is each class file an event named (the events, or'ed) and its
	// watched tree.
	named   map[string]namedFile
	entries int
	buf     []byte // for getdents
	lost    string // why the report is incomplete; "" when it is complete
	// coarse says the watches report the trees' changes only (coarsen).
	coarse bool
	// unread says each directory moved in that could not be read whole:
	// the full search cannot tell the class files it brought.
	unread []string
	// replaced are the roots whose path holds another directory after
	// the build: every class file in it is new.
	replaced []string
	done     chan struct{}
	// stopped says read ended in changes: named is the search's to read.
	stopped bool
}

type namedFile struct {
	mask uint32
	root string
}

// startWatch asks the kernel to report every change in dirs and reads
// every directory of them once its watch is set, within ctx; nil when it
// cannot report them all (a directory missing, unreadable, on a file
// system of another machine, an entry with a class file's name that is not
// a regular file, a bound, no watch left, the end of ctx): the search then
// scans.
func startWatch(ctx context.Context, dirs []watchedDir) *watch {
	return newWatch(ctx, dirs, watchLimits{})
}

func newWatch(ctx context.Context, dirs []watchedDir, limits watchLimits) *watch {
	if len(dirs) == 0 {
		return nil
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	w := &watch{
		start:  time.Now(),
		limits: limits,
		ctx:    ctx,
		fd:     fd,
		file:   os.NewFile(uintptr(fd), "inotify"),
		dirs:   map[int]watchedTree{},
		named:  map[string]namedFile{},
		buf:    make([]byte, 64<<10),
		budget: watchBudget(limits),
		done:   make(chan struct{}),
	}
	for _, dir := range dirs {
		root, err := realPath(dir.root)
		if err == nil && slices.Contains(w.roots, root) {
			continue
		}
		// The root's identity before its watch: a directory put in its
		// place meanwhile is not the one watched (changes).
		var id unix.Stat_t
		if err != nil || unix.Lstat(root, &id) != nil || w.add(root, root, false) != nil || w.lost != "" {
			close(w.done)
			w.close()
			return nil
		}
		if limits.watched != nil {
			limits.watched(root)
		}
		w.roots, w.ids = append(w.roots, root), append(w.ids, id)
	}
	if w.mounts, err = mountsIn(w.roots); err != nil {
		close(w.done)
		w.close()
		return nil
	}
	w.ctx = context.Background()
	if !limits.unread {
		go w.read()
	} else {
		close(w.done)
	}
	return w
}

// errNotWatchable is why a directory's changes cannot all be reported.
var errNotWatchable = errors.New("not watchable")

// add watches the directory at path, then reads it, adding its
// subdirectories the same way: before the build (fresh false) an entry
// with a class file's name that is not a regular file is an error; during
// it (fresh) every class file found is noted as new. The watch comes first,
// so that what is written before it is read, and what after it, reported.
func (w *watch) add(path, root string, fresh bool) error {
	if err := w.ctx.Err(); err != nil {
		return w.lose("the search ran out of time while watching %s: %v", path, err)
	}
	if len(w.dirs) >= w.budget {
		return w.lose("the watched trees hold more than %d directories, the part of the user's watches (fs.inotify.max_user_watches) a search takes", w.budget)
	}
	wd, err := unix.InotifyAddWatch(w.fd, path, w.mask())
	if _, seen := w.dirs[wd]; err == nil && !seen && w.limits.maxWatches > 0 && len(w.dirs) >= w.limits.maxWatches {
		err = unix.ENOSPC
	}
	switch {
	case errors.Is(err, unix.ENOSPC):
		return w.lose("the kernel's limit of watches (fs.inotify.max_user_watches) was reached at %s", path)
	case fresh && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)):
		return nil // removed or replaced since: its events tell what followed
	case err != nil:
		return w.lose("%s could not be watched: %v", path, err)
	}
	if seen, ok := w.dirs[wd]; ok {
		if seen.path != path {
			return w.lose("%s is the directory %s too", path, seen.path)
		}
		return nil // watched and read already
	}
	w.dirs[wd] = watchedTree{path: path, root: root}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if fresh && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)) {
			return nil
		}
		return w.lose("%s could not be read: %v", path, err)
	}
	subdirs, err := w.read1(fd, path, root, fresh)
	unix.Close(fd)
	if err != nil {
		return err
	}
	for _, sub := range subdirs {
		if err := w.add(sub, root, fresh); err != nil {
			return err
		}
	}
	return nil
}

// read1 reads the entries of the open directory fd at path, their names
// and types as the directory holds them (an entry's metadata only where
// the file system gives no type), and returns its subdirectories, read
// once fd is closed, so that a deep tree holds one descriptor at a time.
func (w *watch) read1(fd int, path, root string, fresh bool) ([]string, error) {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil || !localFileSystem(int64(sfs.Type)) {
		return nil, w.lose("%s is on a file system (%#x) whose changes the kernel may not all report", path, sfs.Type)
	}
	var subdirs []string
	for {
		n, err := unix.Getdents(fd, w.buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case fresh && errors.Is(err, unix.ENOENT):
			return nil, nil // removed since: its events tell
		case err != nil:
			return nil, w.lose("%s could not be read: %v", path, err)
		case n == 0:
			return subdirs, nil
		}
		for buf := w.buf[:n]; len(buf) > direntName; {
			reclen := int(binary.NativeEndian.Uint16(buf[direntReclen:]))
			if reclen <= direntName || reclen > len(buf) {
				return nil, w.lose("%s could not be read: an entry of %d bytes", path, reclen)
			}
			typ, name := buf[direntType], buf[direntName:reclen]
			buf = buf[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) == "." || string(name) == ".." {
				continue
			}
			if w.entries++; w.entries > maxScannedEntries {
				return nil, w.lose("the watched directories hold more than %d entries", maxScannedEntries)
			}
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if err := unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					return nil, w.lose("%s could not be read: %v", filepath.Join(path, string(name)), err)
				}
				typ = typeOf(st.Mode)
			}
			switch {
			case typ == unix.DT_DIR:
				subdirs = append(subdirs, filepath.Join(path, string(name)))
			case !bytes.HasSuffix(name, []byte(".class")):
			case !fresh && typ != unix.DT_REG:
				return nil, w.lose("%s is not a regular file", filepath.Join(path, string(name)))
			case fresh:
				if err := w.note(filepath.Join(path, string(name)), inNewDirectory, root); err != nil {
					return nil, err
				}
			}
		}
	}
}

// The layout of a linux_dirent64 that getdents64 fills in: inode (8
// bytes), offset (8), record length (2), type (1), name.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// typeOf is the entry type of a file of mode.
func typeOf(mode uint32) byte {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return unix.DT_UNKNOWN // neither: never searched nor read
}

// note adds mask to the events that named the class file at path.
func (w *watch) note(path string, mask uint32, root string) error {
	f, ok := w.named[path]
	if !ok && len(w.named) >= maxScannedFiles {
		return w.lose("the build changed more than %d class files", maxScannedFiles)
	}
	w.named[path] = namedFile{mask: f.mask | mask, root: root}
	if !ok && !w.coarse {
		w.coarsen()
	}
	return nil
}

// mask is what a directory is watched for.
func (w *watch) mask() uint32 {
	events := uint32(watchEvents)
	if w.coarse {
		events = treeEvents
	}
	return events | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW
}

// coarsen stops following each write once the build wrote more class
// files than an agent keeps receipts for and more than a coarseShare'th
// of the watched trees' entries: each write to a watched directory costs
// the writer the kernel's event (about 18 µs a class file on the machine
// of docs/performance.md#5.4), more than the full search after the build
// costs a file of the trees (about 7 µs). The watches keep the trees'
// changes, so that a directory moved in is still read; the report is
// lost, and the full search finds what the build wrote.
func (w *watch) coarsen() {
	least := w.limits.coarseAfter
	if least == 0 {
		least = MaxVerifiedClasses
	}
	if len(w.named) <= least || len(w.named)*coarseShare <= w.entries {
		return
	}
	w.coarse = true
	w.lose("the build wrote more than %d class files, more than 1/%d of the watched directories' entries: the search after it finds them, as following each write costs the build more", len(w.named)-1, coarseShare)
	for wd, d := range w.dirs {
		// The same directory keeps its watch with the new mask; another
		// one now at its path gets a watch of its own, whose events are
		// not read (its wd is unknown), and the full search reads it.
		if got, err := unix.InotifyAddWatch(w.fd, d.path, w.mask()); err == nil && got != wd {
			_, _ = unix.InotifyRmWatch(w.fd, uint32(got))
		}
	}
}

// lose notes the first reason the report is incomplete, and returns it as
// an error.
func (w *watch) lose(format string, args ...any) error {
	if w.lost == "" {
		w.lost = fmt.Sprintf(format, args...)
	}
	return errNotWatchable
}

// read takes the events while the build runs, until the file's read
// deadline (stop) or an error.
func (w *watch) read() {
	defer close(w.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.file.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				w.lose("the kernel's events could not be read: %v", err)
			}
			return
		}
		w.events(buf[:n])
	}
}

// events handles the events in buf.
func (w *watch) events(buf []byte) {
	for len(buf) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			w.lose("the kernel's events were cut")
			return
		}
		name := strings.TrimRight(string(buf[unix.SizeofInotifyEvent:end]), "\x00")
		buf = buf[end:]
		// Read on when the report is lost: the full search that replaces
		// it needs the class files of the directories moved in.
		w.event(int(ev.Wd), ev.Mask, name)
	}
}

// event handles one event of the directory wd about its entry name.
func (w *watch) event(wd int, mask uint32, name string) {
	dir, ok := w.dirs[wd]
	switch {
	case mask&unix.IN_Q_OVERFLOW != 0:
		w.lose("the kernel's queue of events overflowed (fs.inotify.max_queued_events)")
	case !ok:
	case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT|unix.IN_IGNORED) != 0:
		w.lose("the watched directory %s was moved, deleted or unmounted", dir.path)
	case mask&unix.IN_ISDIR != 0 && mask&unix.IN_MOVED_FROM != 0:
		w.lose("the directory %s was moved", filepath.Join(dir.path, name))
		w.forget(filepath.Join(dir.path, name))
	case mask&unix.IN_ISDIR != 0 && mask&unix.IN_MOVED_TO != 0:
		// Every class file it holds is new at its name, whatever its
		// times: it is read as a directory the build created.
		path := filepath.Join(dir.path, name)
		w.lose("the directory %s was moved", path)
		if w.add(path, dir.root, true) != nil && len(w.unread) < maxProblems {
			w.unread = append(w.unread, fmt.Sprintf("the directory %s was moved into the watched directories and could not be read whole (%s), so the class files it brought that are older than the build may be missed", path, w.lost))
		}
	case mask&unix.IN_ISDIR != 0 && mask&unix.IN_CREATE != 0:
		_ = w.add(filepath.Join(dir.path, name), dir.root, true)
	case mask&unix.IN_ISDIR != 0:
	case mask&(writtenEvents|unix.IN_CLOSE_WRITE) != 0 && strings.HasSuffix(name, ".class"):
		_ = w.note(filepath.Join(dir.path, name), mask&(writtenEvents|unix.IN_CLOSE_WRITE), dir.root)
	}
}

// forget stops watching the directory moved away from path and those
// beneath it, and the class files named there: their names are gone, and
// where the directory was moved to in the trees it is read anew.
func (w *watch) forget(path string) {
	for wd, d := range w.dirs {
		if within(path, d.path) {
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) // gone already: nothing to stop
			delete(w.dirs, wd)
		}
	}
	for p := range w.named {
		if within(path, p) {
			delete(w.named, p)
		}
	}
}

// stop ends read and takes the events still queued, within ctx; when read
// does not end within ctx, or cannot be ended, it says why and leaves the
// watch to read, which then owns it until close.
func (w *watch) stop(ctx context.Context) string {
	if err := w.file.SetReadDeadline(time.Now()); err != nil {
		return fmt.Sprintf("the kernel's events could not be read: %v", err)
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		return "the search ran out of time while reading the kernel's events"
	}
	if err := w.file.SetReadDeadline(time.Time{}); err != nil {
		w.lose("the kernel's events could not be read: %v", err)
		return ""
	}
	rc, err := w.file.SyscallConn()
	if err != nil {
		w.lose("the kernel's events could not be read: %v", err)
		return ""
	}
	buf := make([]byte, 64<<10)
	for ctx.Err() == nil {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = unix.Read(int(fd), buf)
			return true
		}); err != nil {
			rerr = err
		}
		if errors.Is(rerr, unix.EAGAIN) {
			return ""
		}
		if rerr != nil || n <= 0 {
			w.lose("the kernel's events could not be read: %v", rerr)
			return ""
		}
		w.events(buf[:n])
	}
	w.lose("the search ran out of time while reading the kernel's events")
	return ""
}

// close releases the inotify instance once read has ended, which the
// read deadline makes it do after the event at hand; it waits for nothing.
// A second call does nothing.
func (w *watch) close() {
	if w == nil {
		return
	}
	w.closed.Do(func() {
		_ = w.file.SetReadDeadline(time.Now())
		go func() {
			<-w.done
			// The watches go first: an instance that waits for its
			// close elsewhere holds none of the user's watches, which
			// the agent needs.
			for wd := range w.dirs {
				_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
			}
			// Its close waits for the kernel's grace period: not on the
			// way out of a short-lived process (build run).
			buildqueue.CloseAway(w.file)
		}()
	})
}

// changes is the class files the build changed since start, ordered as
// changes orders them, and why the search may have missed one, within
// ctx: the class files an event named or found in a directory the build
// created, each examined now (a file only closed after writing must have
// changed since recentWindow before start), and those of the directories
// of dirs the watched trees do not hold (the agent watches them since),
// scanned; or, when the kernel's report is incomplete, why (lost), and
// the directories moved in that could not be read: the full search then
// adds what besides says. It ends the watch.
func (w *watch) changes(ctx context.Context, dirs []watchedDir) (changed []changedFile, problems []string, lost string) {
	defer w.close()
	if reason := w.stop(ctx); reason != "" {
		return nil, nil, reason
	}
	w.stopped = true
	for i, root := range w.roots {
		// A parent of a root moved raises no event of the watch, and
		// the names the events gave are not those of the files now.
		var id unix.Stat_t
		if err := unix.Lstat(root, &id); err != nil || id.Dev != w.ids[i].Dev || id.Ino != w.ids[i].Ino {
			w.lose("the watched directory %s is not the directory watched", root)
			w.replaced = append(w.replaced, root)
		}
	}
	if len(w.replaced) > 0 {
		return nil, nil, w.lost
	}
	if mounts, err := mountsIn(w.roots); err != nil || mounts != w.mounts {
		// A file system mounted over a watched directory raises no event,
		// and what is written there none of its watch.
		w.lose("a file system was mounted or unmounted in the watched directories while the build ran")
	}
	s := &search{}
	var late []watchedDir
	for _, dir := range dirs {
		root, err := realPath(dir.root)
		if err != nil || !slices.ContainsFunc(w.roots, func(r string) bool { return within(r, root) }) {
			late = append(late, dir)
		}
	}
	if w.lost != "" {
		// The full search finds what changed, and says its problems.
		return nil, w.unread, w.lost
	}
	for path, f := range w.named {
		if ctx.Err() != nil {
			s.problem("the search ran out of time while reading the class files the build changed")
			break
		}
		if c, ok := w.examine(s, path, f); ok {
			changed = append(changed, c)
		}
	}
	if w.lost != "" { // a class file with another name
		return nil, w.unread, w.lost
	}
	if len(late) > 0 {
		snap := scan(ctx, late, false)
		for p := range snap.files {
			if _, ok := w.named[p]; ok {
				delete(snap.files, p) // examined above
			}
		}
		changed = append(changed, changedIn(ctx, snapshot{at: w.start}, snap)...)
		for _, p := range snap.problems {
			s.problem("%s", p)
		}
	}
	return ordered(ctx, changed), s.problems, ""
}

// besides is the class files an event named that found lacks, each
// examined now, within ctx: the full search that replaces a lost report
// adds them to what it found, as a class file moved in keeps its older
// times. What cannot be examined the full search says. Nothing, when
// changes could not end read, which then owns the watch.
func (w *watch) besides(ctx context.Context, found map[string]bool) []changedFile {
	var out []changedFile
	if !w.stopped {
		return nil
	}
	for path, f := range w.named {
		if ctx.Err() != nil {
			break
		}
		if !found[path] {
			if c, ok := w.examine(&search{}, path, f); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// replacedRoots are the watched directories whose path held another
// directory after the build (changes), whose every class file is new.
func (w *watch) replacedRoots() []string {
	return w.replaced
}

// mountsIn is the mounts of this process's mount table at or beneath
// roots, one a line (its id and mount point), or why it cannot be read.
func mountsIn(roots []string) (string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for line := range strings.Lines(string(data)) {
		// id, parent id, device, root, mount point, ...
		f := strings.Fields(line)
		if len(f) < 5 {
			return "", fmt.Errorf("a line of /proc/self/mountinfo has %d fields", len(f))
		}
		at := unescapeMountPoint(f[4])
		if slices.ContainsFunc(roots, func(root string) bool { return within(root, at) }) {
			fmt.Fprintf(&out, "%s %s\n", f[0], at)
		}
	}
	return out.String(), nil
}

// unescapeMountPoint is a mount point as the mount table spells it, with
// a space, tab, newline or backslash as an octal escape, as a path.
func unescapeMountPoint(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// examine is the class file at path that events named, as it is now, and
// whether the build changed it: its problem noted in s when it is not a
// regular file or cannot be read; not changed when it is gone or not a
// class; the report lost when it has another name, which changed with it.
func (w *watch) examine(s *search, path string, f namedFile) (changedFile, bool) {
	class, ok := className(f.root, path)
	if !ok {
		return changedFile{}, false
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return changedFile{}, false
	case err != nil:
		s.problem("%s could not be read: %v", path, err)
		return changedFile{}, false
	case fi.IsDir():
		return changedFile{}, false // a directory now: its own events tell
	case !fi.Mode().IsRegular():
		s.problem("%s is not a regular file (%v), so its class cannot be read", path, fi.Mode().Type())
		return changedFile{}, false
	}
	st := fileStamp(fi)
	changedAt := max(st.mtime, st.ctime)
	if f.mask&(writtenEvents|inNewDirectory) == 0 && w.start.UnixNano()-changedAt >= int64(recentWindow) {
		return changedFile{}, false // opened for writing, closed, and not written
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		// Its other names changed too, and no event named them.
		w.lose("%s has %d hard links, whose other names no event names", path, sys.Nlink)
		return changedFile{}, false
	}
	return changedFile{class: class, path: path, changed: changedAt}, true
}
