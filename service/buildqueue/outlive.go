package buildqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/buildguard/buildguard/internal/filelock"
	osproc "github.com/buildguard/buildguard/internal/proc"
)

// A build's turn lasts as long as its processes (docs/decisions.md#D22).
// The run lock is let go when the build's supervisor dies, however it
// dies; the processes its command started may live on (the kernel ends
// only the command itself with the supervisor, docs/safe-build.md#4). So
// the build records its command's process group (and, under a pty, its
// session) in the queue's directory once the command runs, and blanks or
// removes the record when it has ended; the next build that takes the run
// lock reads what records are left, waits for the processes they name up
// to the grace period, ends the rest with SIGKILL and only then starts.

// procsName is the record of the processes of the build that holds the
// project's turn, in the queue's directory. It is kept from build to build
// and overwritten in place, recordWidth bytes padded with spaces, and
// blanked (all spaces) at the build's end: a file written in place costs a
// build a fifth of one created and removed (0.02 ms against 0.13-0.2 ms
// here). A nested build records its command in a file of its own,
// groupPrefix and its process group's id, removed at its end.
const (
	procsName   = "procs"
	groupPrefix = "g-"
	recordWidth = 256
)

// maxGroupBytes bounds what is read of a record.
const maxGroupBytes = 4 << 10

// The waits for the processes of an earlier build.
const (
	// DefaultGrace is how long the processes of an earlier build are
	// waited for before they are ended, when Request.Grace is 0.
	DefaultGrace = 10 * time.Second
	// outlivedPoll is the pause between two looks at them: the kernel
	// tells nobody when a process that is not its child ends.
	outlivedPoll = 50 * time.Millisecond
	// killWait bounds the wait for them to be gone after SIGKILL.
	killWait = 5 * time.Second
)

// group is a record of a build's processes: its command's process group
// and session (0: the command leads none), and what tells them from later
// holders of the same ids: the leader's start, the session the leader was
// in, the boot and the pid namespace the ids belong to.
type group struct {
	PGID  int    `json:"pgid"`
	SID   int    `json:"sid,omitempty"`
	In    int    `json:"in,omitempty"` // the session the leader was in
	Start uint64 `json:"start"`        // the leader's start, clock ticks after boot
	Boot  string `json:"boot"`
	NS    string `json:"ns,omitempty"` // the recorder's pid namespace
}

// pidNS names this process's pid namespace: a record's ids mean nothing
// in another one (a container building the same project, say).
var pidNS = sync.OnceValue(func() string {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return ns
})

// bootID is the id of the running boot, read once.
var bootID = sync.OnceValue(osproc.BootID)

// Started records that the build's command runs as pid, the leader of its
// own process group and, with session, of its own session: until Release,
// no later build of the project starts while a process of that group or
// session runs, even when this process dies without a Release. Where the
// system cannot name a process's start (no /proc) nothing is recorded. It
// does nothing for a joined turn, and records one command a turn. With
// this process's watchdog started (EnableWatchdog), the watchdog is told of
// the group too, and ends it, after the request's grace, when this process
// dies before Release.
func (t *Turn) Started(pid int, session bool) {
	if t == nil || t.dir == "" || t.record != nil || pid <= 1 || (t.project == nil && t.nested == "") {
		return
	}
	p, ok := osproc.Lookup(pid)
	boot := bootID()
	if !ok || boot == "" || p.PGID != pid {
		t.q.log.Debug("the build's processes cannot be recorded here; a later build will not wait for those that outlive this one", "pid", pid)
		return
	}
	g := group{PGID: pid, In: p.Session, Start: p.Start, Boot: boot, NS: pidNS()}
	if session && p.Session == pid {
		g.SID = pid
	}
	data, _ := json.Marshal(g)
	path, flag := filepath.Join(t.dir, procsName), os.O_RDWR|os.O_CREATE
	if t.project == nil {
		path, flag = filepath.Join(t.dir, groupPrefix+strconv.Itoa(pid)), os.O_WRONLY|os.O_CREATE|os.O_TRUNC
	}
	f, err := filelock.OpenNoFollow(path, flag)
	if err == nil {
		if _, err = f.WriteAt(padded(data), 0); err != nil {
			f.Close()
		}
	}
	if err != nil {
		t.q.log.Warn("recording the build's process group failed; a later build will not wait for processes that outlive this one", "error", err)
		return
	}
	t.record = f // kept open until Release, which blanks or removes it
	if d := current(); d != nil {
		grace := t.grace
		if grace == 0 {
			grace = DefaultGrace
		}
		d.watch(g, max(grace, 0))
		t.watched, t.pgid = d, g.PGID
	}
}

// padded is a record recordWidth bytes long, or longer when data is.
func padded(data []byte) []byte {
	if n := recordWidth - len(data); n > 0 {
		data = append(data, bytes.Repeat([]byte{' '}, n)...)
	}
	return data
}

// forget ends the record of the build's processes at its Release: the
// turn's record is blanked, a nested build's removed.
func (t *Turn) forget() {
	f := t.record
	if f == nil {
		return
	}
	t.record = nil
	if d := t.watched; d != nil {
		t.watched = nil
		d.unwatch(t.pgid)
	}
	if t.project != nil {
		_, _ = f.WriteAt(padded(nil), 0)
	} else if filelock.IsAt(f, f.Name()) {
		_ = os.Remove(f.Name())
	}
	f.Close()
}

// Outlived returns how many processes of an earlier build of the project,
// left running when its supervisor died, this build waited for before it
// started, and how many of them it ended with SIGKILL after the grace
// period.
func (t *Turn) Outlived() (found, ended int) { return t.found, t.ended }

// OutlivedNote words what Outlived returns for a build's answer: "" when
// nothing outlived an earlier build.
func (t *Turn) OutlivedNote() string {
	switch {
	case t.found == 0:
		return ""
	case t.ended == 0:
		return fmt.Sprintf("it waited for %d %s of an earlier build of the project that outlived its supervisor (killed or crashed) until they ended", t.found, processes(t.found))
	}
	return fmt.Sprintf("it ended %d %s of an earlier build of the project that outlived its supervisor (killed or crashed) and still ran after the grace period (SIGKILL)", t.ended, processes(t.ended))
}

func processes(n int) string {
	if n == 1 {
		return "process"
	}
	return "processes"
}

// endOutlived waits for the processes of earlier builds that outlived
// their supervisors, up to the request's grace, ends what is left of them
// and removes their records: the caller holds the run lock, so no build
// of the project runs and every record is an earlier build's. It returns
// how many processes it found and how many it ended; an error (ctx's, or
// processes that SIGKILL did not end) leaves the records for the next
// build.
func (w *waiter) endOutlived(ctx context.Context, dir string) (found, ended int, err error) {
	groups, files := readGroups(dir)
	if len(files) == 0 {
		return 0, 0, nil
	}
	live := liveOf(groups)
	found = len(live)
	grace := w.req.Grace
	if grace == 0 {
		grace = DefaultGrace
	}
	deadline := time.Now().Add(max(grace, 0))
	for len(live) > 0 && time.Now().Before(deadline) {
		now := time.Now()
		w.report(Status{Place: 1, Outlived: len(live), EndIn: deadline.Sub(now), Waited: now.Sub(w.start)}, now)
		w.flush()
		if err := pause(ctx, min(outlivedPoll, time.Until(deadline))); err != nil {
			return found, 0, err
		}
		live = liveOf(groups)
	}
	// Each look kills what it finds: a process forked by one killed a
	// moment before is found, and killed, by the next look.
	killed := map[int]bool{}
	for end := time.Now().Add(killWait); len(live) > 0; live = liveOf(groups) {
		for _, p := range live {
			if !killed[p.PID] && endProcess(p) {
				killed[p.PID] = true
				ended++
			}
		}
		if !time.Now().Before(end) {
			return found, ended, fmt.Errorf("%w: %d %s of an earlier build of the project (pid %d, …) outlived its supervisor and still run %s after SIGKILL; the build does not start beside them: end them, then build again", ErrUnusable, len(live), processes(len(live)), live[0].PID, killWait)
		}
		if err := pause(ctx, outlivedPoll); err != nil {
			return found, ended, err
		}
	}
	for _, f := range files {
		_ = os.Remove(f)
	}
	return found, ended, nil
}

// readGroups reads the records in dir: the ones that name processes of
// this boot, and the paths of all of them.
func readGroups(dir string) (groups []group, files []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		name := e.Name()
		namedPGID, named := groupPGID(name)
		if (!named && name != procsName) || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, name)
		g, ok, blank := readGroup(path)
		if blank && name == procsName {
			continue // the normal state: the last build ended
		}
		files = append(files, path)
		pgid := g.PGID
		if named {
			pgid = namedPGID
		}
		if ok && g.PGID == pgid && g.PGID > 1 && g.Boot == bootID() && g.NS == pidNS() {
			groups = append(groups, g)
		}
	}
	return groups, files
}

// readGroup reads the record at path: the group, ok when it is one, and
// blank when the file holds nothing but spaces.
func readGroup(path string) (g group, ok, blank bool) {
	f, err := filelock.OpenNoFollow(path, os.O_RDONLY)
	if err != nil {
		return group{}, false, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGroupBytes))
	if err != nil {
		return group{}, false, false
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return group{}, false, true
	}
	// The first value: a record written in place over a longer file is
	// followed by what was there.
	return g, json.NewDecoder(bytes.NewReader(data)).Decode(&g) == nil, false
}

// liveOf returns the running processes of the recorded groups: members of
// a group or session started no earlier than its leader and in the session
// the leader was in, while the leader's id is not another process's; never
// this process. A process that took the group's id as its own session's
// (setsid, once the group was gone) is no member.
func liveOf(groups []group) []osproc.Process {
	var out []osproc.Process
	for _, g := range groups {
		if l, ok := osproc.Lookup(g.PGID); ok && l.Start != g.Start {
			continue // the id is another process's: the group ended long ago
		}
		ps, err := osproc.Members(g.PGID, g.SID)
		if err != nil {
			continue
		}
		for _, p := range ps {
			inSession := g.In == 0 || p.Session == g.In || (g.SID != 0 && p.Session == g.SID)
			if p.Start >= g.Start && inSession && p.PID != os.Getpid() {
				out = append(out, p)
			}
		}
	}
	return out
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
