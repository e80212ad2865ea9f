package mcptask

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// blocked is work that runs until its task is cancelled.
func blocked(ctx context.Context, _ *Run) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestList2025Pages: tasks/list pages an owner's tasks oldest first,
// ListPageSize at a time, each task once, with a nextCursor only while more
// follow; another owner's tasks and the 2026-07-28 ones (no owner) are never
// listed nor reachable; a cursor the store never gave is refused.
func TestList2025Pages(t *testing.T) {
	t.Parallel()
	c := newClock()
	s := NewStore(Config{MaxTasks: 2*ListPageSize + 10, Now: c.now})
	defer closeStore(t, s)
	type owner struct{ name string }
	a, b := &owner{"a"}, &owner{"b"}
	var mine []string
	for i := range ListPageSize + 5 {
		if i%3 == 0 {
			c.add(time.Millisecond) // some share a creation time, some not
		}
		seed, err := s.start("a", a, blocked)
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, seed.TaskID)
	}
	theirs, err := s.start("b", b, blocked)
	if err != nil {
		t.Fatal(err)
	}
	unowned, err := s.Start("2026", blocked)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	cursor, pages := "", 0
	for {
		page, next, err := s.List2025(a, cursor)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if len(page) > ListPageSize {
			t.Fatalf("page %d holds %d tasks, more than %d", pages, len(page), ListPageSize)
		}
		for _, task := range page {
			listed = append(listed, task.TaskID)
		}
		pages++
		if next == "" {
			break
		}
		if pages > 3 {
			t.Fatal("tasks/list never ends")
		}
		cursor = next
	}
	if pages != 2 || len(listed) != len(mine) {
		t.Fatalf("%d pages of %d tasks, want 2 pages of %d", pages, len(listed), len(mine))
	}
	seen := map[string]bool{}
	for _, id := range listed {
		if seen[id] || id == theirs.TaskID || id == unowned.TaskID {
			t.Errorf("task %s listed twice or not a's", id)
		}
		seen[id] = true
	}
	for _, id := range mine {
		if !seen[id] {
			t.Errorf("a's task %s never listed", id)
		}
	}
	if page, _, _ := s.List2025(b, ""); len(page) != 1 || page[0].TaskID != theirs.TaskID {
		t.Errorf("b's list: %v", page)
	}
	for _, id := range []string{theirs.TaskID, unowned.TaskID} {
		if _, err := s.Get2025(a, id); !errors.Is(err, ErrUnknownTask) {
			t.Errorf("Get2025 by a of %s: %v, want ErrUnknownTask", id, err)
		}
		if _, err := s.Cancel2025(a, id); !errors.Is(err, ErrUnknownTask) {
			t.Errorf("Cancel2025 by a of %s: %v, want ErrUnknownTask", id, err)
		}
	}
	for _, bad := range []string{"!", "bm90LWEtY3Vyc29y", "MTIz"} {
		if _, _, err := s.List2025(a, bad); err == nil {
			t.Errorf("cursor %q: no error", bad)
		}
	}
}

// TestView2025: a tool result with isError is failed in the 2025-11-25
// form (completed in the extension's), and a cancellation asked for reads
// cancelled at once and stays cancelled though the work then returns a
// result.
func TestView2025(t *testing.T) {
	t.Parallel()
	s := NewStore(Config{})
	defer closeStore(t, s)
	owner := "o"
	failed, _ := s.start("", owner, func(context.Context, *Run) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[],"isError":true}`), nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Wait(ctx, failed.TaskID); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get2025(owner, failed.TaskID); v.Status != StatusFailed {
		t.Errorf("isError result: %s, want failed", v.Status)
	}
	if d, _ := s.Get(failed.TaskID); d.Status != StatusCompleted {
		t.Errorf("isError result in the extension's form: %s, want completed", d.Status)
	}
	release := make(chan struct{})
	late, _ := s.start("", owner, func(context.Context, *Run) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{"content":[],"isError":false}`), nil
	})
	v, err := s.Cancel2025(owner, late.TaskID)
	if err != nil || v.Status != StatusCancelled {
		t.Fatalf("Cancel2025: %v %v, want cancelled", v.Status, err)
	}
	close(release)
	res, err := s.Result2025(ctx, owner, late.TaskID, time.Minute)
	if err != nil || string(res) != `{"content":[],"isError":false}` {
		t.Errorf("Result2025 of a task that finished after its cancellation: %s %v, want its result", res, err)
	}
	if v, _ := s.Get2025(owner, late.TaskID); v.Status != StatusCancelled {
		t.Errorf("after its work returned a result: %s, want cancelled still", v.Status)
	}
	if _, err := s.Cancel2025(owner, late.TaskID); !errors.Is(err, ErrTerminal) {
		t.Errorf("second Cancel2025: %v, want ErrTerminal", err)
	}
}

// TestResult2025Bounded: tasks/result of a task still working gives up
// after its wait with -32000, and when its request ends.
func TestResult2025Bounded(t *testing.T) {
	t.Parallel()
	s := NewStore(Config{})
	defer closeStore(t, s)
	task, _ := s.start("", "o", blocked)
	_, err := s.Result2025(context.Background(), "o", task.TaskID, time.Millisecond)
	if code(err) != codeStillWorking {
		t.Errorf("Result2025 past its wait: %v, want -32000", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Result2025(ctx, "o", task.TaskID, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Result2025 of an ended request: %v, want context.Canceled", err)
	}
}

// TestList2025RefusesForgedCursors: a cursor of the right shape that the
// store never gave (a position written by hand, one another store gave,
// one with its signature changed) is refused; the one it gave pages on.
func TestList2025RefusesForgedCursors(t *testing.T) {
	t.Parallel()
	other := NewStore(Config{MaxTasks: 2*ListPageSize + 10})
	defer closeStore(t, other)
	s := NewStore(Config{MaxTasks: 2*ListPageSize + 10})
	defer closeStore(t, s)
	type owner struct{ name string }
	a := &owner{"a"}
	var first string
	for i := range ListPageSize + 1 {
		for _, st := range []*Store{s, other} {
			seed, err := st.start("a", a, blocked)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 && st == s {
				first = seed.TaskID
			}
		}
	}
	_, given, err := s.List2025(a, "")
	if err != nil || given == "" {
		t.Fatalf("first page: cursor %q, %v", given, err)
	}
	_, othersCursor, _ := other.List2025(a, "")
	handmade := base64.RawURLEncoding.EncodeToString([]byte("0." + first))
	pos, _, _ := strings.Cut(given, ".")
	tampered := pos + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	for name, bad := range map[string]string{"handmade": handmade, "another store's": othersCursor, "tampered": tampered, "position only": pos} {
		if page, _, err := s.List2025(a, bad); err == nil {
			t.Errorf("%s cursor %q: %d tasks, want it refused", name, bad, len(page))
		}
	}
	if page, next, err := s.List2025(a, given); err != nil || len(page) != 1 || next != "" {
		t.Errorf("the cursor given: %d tasks, next %q, %v; want the last task", len(page), next, err)
	}
}
