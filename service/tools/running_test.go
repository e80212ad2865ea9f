package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/buildguard/buildguard/service/safebuild"
)

// TestRunningAnswerFitsEveryHost: the answer of a build that goes on
// without its call (docs/safe-build.md#14), at its bounds (a command of
// 256 long arguments, a log path of 4 KiB, a latest line and a place in
// the queue full of what JSON escapes), fits each host's budget, is valid
// against the output schema, and says the build's id and how to resume it
// both in what Codex shows (the structured result) and in what Claude
// Code shows (the text), whatever was cut.
func TestRunningAnswerFitsEveryHost(t *testing.T) {
	t.Parallel()
	schema := toolOutputSchemas(t)[ToolSafeBuild]
	command := hostileResults(t)["failed"].Command
	hostile := strings.Repeat("\x1b[31m\"<&>\\\u2028\t", 40)
	for name, fill := range map[string]func(w *buildWatch){
		"queued": func(w *buildWatch) { w.queue(strings.Repeat(hostile, 20)) },
		"running": func(w *buildWatch) {
			w.logStarted("/p/" + strings.Repeat("d", 4000) + "/.buildguard/logs/20261203T010203456Z-maven.log")
			w.progress(400_000, hostile[:200])
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := &detachedBuild{id: newBuildID(), watch: newBuildWatch(safebuild.Build{Name: "maven", Command: command}, time.Now().Add(-time.Minute))}
			fill(d.watch)
			out, err := runningAnswer(d, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(instance(t, string(out.Data))); err != nil {
				t.Fatalf("breaks the output schema: %v\n%s", err, out.Data)
			}
			var got safebuild.Result
			if err := json.Unmarshal(out.Data, &got); err != nil {
				t.Fatal(err)
			}
			next := fmt.Sprintf("resume %q", d.id)
			if out.IsError || got.Outcome != safebuild.OutcomeRunning || got.BuildID != d.id || !strings.Contains(got.Detail, next) {
				t.Errorf("isError %v, outcome %q, buildId %q, detail %q: want running, %s and %s in the detail", out.IsError, got.Outcome, got.BuildID, got.Detail, d.id, next)
			}
			lines := strings.Split(out.Text, "\n")
			if !strings.HasPrefix(lines[0], `build "maven": running after 1m0s; buildId `+d.id) || !strings.Contains(out.Text, next) ||
				len(out.Text) > MaxFailedText || len(lines) > 256 || !utf8.ValidString(out.Text) || out.LegacyText != out.Text {
				t.Errorf("text of %d bytes, %d lines:\n%s", len(out.Text), len(lines), out.Text)
			}
			for _, h := range hostBudgets {
				part := out.Text
				if h.structured {
					longest, _ := json.Marshal(json.RawMessage(out.Data))
					part = "Wall time: 1234.5678 seconds\nOutput:\n" + string(longest)
				}
				if n := strings.Count(part, "\n") + 1; (h.bytes > 0 && len(part) > h.bytes) || (h.lines > 0 && n > h.lines) ||
					(h.chars > 0 && utf8.RuneCountInString(part) > h.chars) {
					t.Errorf("%s: %d bytes, %d characters, %d lines, over its budget", h.host, len(part), utf8.RuneCountInString(part), n)
				}
			}
		})
	}
}

// TestSlowProgressHoldsUpNoOtherCall: a call that is slow to send the
// progress of the build it waits for (a client that stops reading) holds
// up no other call's start or end of waiting on that build.
func TestSlowProgressHoldsUpNoOtherCall(t *testing.T) {
	t.Parallel()
	w := newBuildWatch(safebuild.Build{Name: "b"}, time.Now())
	sending, release := make(chan struct{}), make(chan struct{})
	stuck := w.listen(func(int, string) {
		close(sending)
		<-release
	}, nil)
	defer stuck()
	go w.progress(1, "compiling")
	<-sending
	defer close(release)
	other := make(chan struct{})
	go func() {
		w.listen(nil, nil)()
		w.queue("place 2")
		close(other)
	}()
	select {
	case <-other:
	case <-time.After(10 * time.Second):
		t.Fatal("another call could not start or end waiting for 10s while one call's progress was stuck")
	}
	if logFile, lines, latest, _ := w.snapshot(); logFile != "" || lines != 1 || latest != "compiling" {
		t.Errorf("snapshot %q %d %q", logFile, lines, latest)
	}
}

// TestDetachedBuildsBounds: a service keeps at most its bound of detached
// builds; when a new one needs room the finished one already read goes
// first, else the one that ended first; a running one never goes, so with
// every kept build running there is no room and the call waits for its
// whole build instead.
func TestDetachedBuildsBounds(t *testing.T) {
	t.Parallel()
	s := newDetachedBuilds(3, time.Hour)
	build := func() *detachedBuild { return &detachedBuild{done: make(chan struct{})} }
	a, b, c := build(), build(), build()
	for _, d := range []*detachedBuild{a, b, c} {
		if !s.keep(d) {
			t.Fatal("no room below the bound")
		}
	}
	if s.keep(build()) {
		t.Fatal("a fourth build was kept while three run")
	}
	a.finish(s, Result{}, nil)
	b.finish(s, Result{}, nil) // ended after a, but read
	s.markRead(b)
	if d := build(); !s.keep(d) || s.get(b.id) != nil || s.get(a.id) != a || s.get(c.id) != c || s.get(d.id) != d {
		t.Fatal("room was not made by dropping the finished build already read")
	}
	if d := build(); !s.keep(d) || s.get(a.id) != nil || s.get(c.id) != c {
		t.Fatal("room was not made by dropping the build that ended first")
	}
	if s.keep(build()) {
		t.Fatal("a running build was dropped to make room")
	}
}
