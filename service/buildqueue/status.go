package buildqueue

import (
	"fmt"
	"strings"
	"time"
)

// Entry is one build ahead in the line, as a waiting build is told about
// it. It never carries an owner token.
type Entry struct {
	// Name is the build's name (a safe build) or its command (the wrapper).
	Name string
	// PID is the process that queued it.
	PID int
	// Front is where it came from: "MCP", "build run" or "terminal".
	Front string
	// Running is true once it has started; false while it waits.
	Running bool
	// For is how long it has been running, or waiting when it has not
	// started.
	For time.Duration
}

func (e Entry) String() string {
	who := fmt.Sprintf("pid %d", e.PID)
	if e.Front != "" {
		who += ", " + e.Front
	}
	state := "waiting"
	if e.Running {
		state = "running"
	}
	return fmt.Sprintf("%q (%s) %s for %s", e.Name, who, state, e.For.Round(time.Second))
}

// Status is where a waiting build stands.
type Status struct {
	// Place is the build's place in the line: 1 + the builds ahead of it.
	Place int
	// Ahead are the builds ahead, in order (the running one first). For a
	// joined build, the builds ahead of the one it joined.
	Ahead []Entry
	// Joined is the identical waiting build this one joined; nil when it
	// waits for a build of its own.
	Joined *Entry
	// Slots is non-zero when the build is first in its project's line and
	// waits for one of the user's Slots build slots (BUILDGUARD_MAX_BUILDS).
	Slots int
	// Unticketed is true when the build is first in its project's line
	// but a build of the project still runs whose ticket a hand removed
	// (with .buildguard/queue or .buildguard, perhaps): it waits for
	// that build's end.
	Unticketed bool
	// Outlived is non-zero when the build's turn has come but processes
	// of an earlier build of the project still run that outlived its
	// supervisor (killed or crashed): it waits for them, and ends them
	// with SIGKILL after EndIn.
	Outlived int
	EndIn    time.Duration
	// Waited is how long the build has waited so far.
	Waited time.Duration
}

// maxListed is how many builds ahead a status names.
const maxListed = 4

// String words the status for a person or a model, on one line.
func (s Status) String() string {
	var b strings.Builder
	switch {
	case s.Joined != nil:
		fmt.Fprintf(&b, "joined the identical build %s; it will run for both", *s.Joined)
	case s.Outlived > 0:
		they, is, end := "they", "are", "end"
		if s.Outlived == 1 {
			they, is, end = "it", "is", "ends"
		}
		fmt.Fprintf(&b, "first in the project's build queue, waiting for %d %s of an earlier build of the project that outlived its supervisor (killed or crashed); %s %s ended with SIGKILL in %s unless %s %s first",
			s.Outlived, processes(s.Outlived), they, is, s.EndIn.Round(100*time.Millisecond), they, end)
	case s.Unticketed:
		b.WriteString("first in the project's build queue, waiting for a build of the project that runs without a ticket in it (its ticket, .buildguard/queue or .buildguard was removed while it ran)")
	case s.Slots > 0:
		fmt.Fprintf(&b, "first in the project's build queue, waiting for one of %d build slots of this user (BUILDGUARD_MAX_BUILDS)", s.Slots)
	default:
		fmt.Fprintf(&b, "waiting in the project's build queue at place %d", s.Place)
	}
	if len(s.Ahead) > 0 {
		b.WriteString("; ahead: ")
		for i, e := range s.Ahead {
			if i == maxListed {
				fmt.Fprintf(&b, ", and %d more", len(s.Ahead)-maxListed)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.String())
		}
	}
	fmt.Fprintf(&b, "; waited %s", s.Waited.Round(time.Second))
	return b.String()
}

// same reports whether two statuses name the same builds at the same
// places (times aside).
func (s Status) same(o Status) bool {
	if s.Place != o.Place || s.Slots != o.Slots || s.Outlived != o.Outlived || s.Unticketed != o.Unticketed || len(s.Ahead) != len(o.Ahead) || (s.Joined == nil) != (o.Joined == nil) {
		return false
	}
	for i := range s.Ahead {
		a, b := s.Ahead[i], o.Ahead[i]
		if a.PID != b.PID || a.Name != b.Name || a.Running != b.Running {
			return false
		}
	}
	return s.Joined == nil || (s.Joined.PID == o.Joined.PID && s.Joined.Name == o.Joined.Name && s.Joined.Running == o.Joined.Running)
}
