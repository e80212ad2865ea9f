package hostconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/buildguard/buildguard/service/tools"
)

// edit applies the host's editor to old and checks the result: it parses,
// our entry holds exactly e, and everything else decodes as before. A
// failed check is a bug, reported as an error; nothing is written. An
// existing entry that the host would not start as buildguard whatever
// command it names is refused (ErrWillNotStart).
func edit(h Host, old []byte, e Entry) ([]byte, []string, error) {
	syntax := h.Format.syntax()
	// The editor checks the file (its bounds, depth and syntax) before
	// anything decodes it.
	out, err := syntax.edit(old, h.Container, e)
	if err != nil {
		return nil, nil, err
	}
	before, err := decode(h.Format, old)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if problems := notStarted(h, before, true); len(problems) > 0 {
		return nil, nil, fmt.Errorf("%w: %s", ErrWillNotStart, strings.Join(problems, "; "))
	}
	kept, timeoutNote := keepLongerTimeout(h, before, e)
	if kept.TimeoutKey != e.TimeoutKey {
		if out, err = syntax.edit(old, h.Container, kept); err != nil {
			return nil, nil, err
		}
		e = kept
	}
	notes := append(servedBefore(h, before, e), timeoutNote...) // before sameExceptOurs strips our keys from before
	notes = append(notes, droppedAnswerWithin(h, before, e)...)
	after, err := decode(h.Format, out)
	if err != nil && h.Format == TOML {
		return nil, nil, fmt.Errorf("%w: with the [%s] table added it would not parse (%v); add the entry yourself", ErrUnsupported, h.Path(), err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the edited %s file does not parse: %v", errEditBroken, h.Name, err)
	}
	if err := sameExceptOurs(before, after, h.Container, e); err != nil {
		return nil, nil, fmt.Errorf("%w: the edit of the %s file: %v", errEditBroken, h.Name, err)
	}
	return out, notes, nil
}

// keepLongerTimeout returns e without its tool timeout when the entry in
// doc already has one at least as long (the user's, kept as written), and
// a note when it replaces a shorter one.
func keepLongerTimeout(h Host, doc map[string]any, e Entry) (Entry, []string) {
	if e.TimeoutKey == "" {
		return e, nil
	}
	servers, _ := doc[h.Container].(map[string]any)
	entry, _ := servers[EntryName].(map[string]any)
	raw, present := entry[e.TimeoutKey]
	if !present {
		return e, nil
	}
	have, ok := number(raw)
	if ok && have >= float64(e.Timeout) {
		e.TimeoutKey, e.Timeout = "", 0
		return e, nil
	}
	return e, []string{fmt.Sprintf("%s.%s was %s, shorter than a build of this project may take; it becomes %d", h.Path(), e.TimeoutKey, jsonText(raw), e.Timeout)}
}

// number returns a decoded JSON or TOML number as a float64.
func number(v any) (float64, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case int64:
		return float64(t), true
	case float64:
		return t, true
	}
	return 0, false
}

// notStarted lists why host h would not start doc's buildguard entry as a
// buildguard server over stdio, whatever its command: the entry names a URL
// (the host connects to it instead), a transport type other than stdio, or
// is disabled; or the file's own settings exclude it. When editing, a type
// the host needs is ours to write and not a problem.
func notStarted(h Host, doc map[string]any, editing bool) []string {
	servers, _ := doc[h.Container].(map[string]any)
	entry, _ := servers[EntryName].(map[string]any)
	var out []string
	if entry != nil {
		for _, k := range []string{"url", "httpUrl", "serverUrl"} {
			if _, ok := entry[k]; ok {
				out = append(out, fmt.Sprintf("%s has %q, so the host connects to that URL instead of starting a command", h.Path(), k))
			}
		}
		if t, ok := entry["type"]; ok && h.Format == JSON && !(editing && h.Type != "") && t != "stdio" {
			out = append(out, fmt.Sprintf("%s has \"type\": %s, so the host does not start a command for it", h.Path(), jsonText(t)))
		}
		if entry["disabled"] == true {
			out = append(out, fmt.Sprintf("%s has \"disabled\": true", h.Path()))
		}
		if h.Format == TOML && entry["enabled"] == false {
			out = append(out, fmt.Sprintf("%s has enabled = false", h.Path()))
		}
	}
	if h.Name == "gemini" {
		mcp, _ := doc["mcp"].(map[string]any)
		if list, ok := mcp["excluded"].([]any); ok && slices.Contains(list, any(EntryName)) {
			out = append(out, "mcp.excluded lists buildguard")
		}
		if list, ok := mcp["allowed"].([]any); ok && !slices.Contains(list, any(EntryName)) {
			out = append(out, "mcp.allowed does not list buildguard")
		}
	}
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// servedBefore returns a note when a user-level entry (one file for every
// project) served another project than the one e serves.
func servedBefore(h Host, before map[string]any, e Entry) []string {
	if h.Scope != User {
		return nil
	}
	servers, _ := before[h.Container].(map[string]any)
	entry, _ := servers[EntryName].(map[string]any)
	was, now := projectDir(entry["args"]), projectDir(e.Args)
	if was == "" || was == now {
		return nil
	}
	return []string{fmt.Sprintf("the %s entry served the project %s; it now serves %s (one entry serves one project)", h.Title, was, now)}
}

// projectDir returns the value of --project-dir in args (a []any or
// []string), or "".
func projectDir(args any) string { return argValue(args, "--project-dir") }

// droppedAnswerWithin returns a note when the entry had an
// --answer-within that e does not carry (init run without it). A value
// `mcp --answer-within` refuses (docs/mcp-server.md#1.1), or none, kept
// the server from starting: the note says so and offers no init run that
// would refuse it too.
func droppedAnswerWithin(h Host, before map[string]any, e Entry) []string {
	servers, _ := before[h.Container].(map[string]any)
	entry, _ := servers[EntryName].(map[string]any)
	if !hasArg(entry["args"], "--answer-within") || argValue(e.Args, "--answer-within") != "" {
		return nil
	}
	was := argValue(entry["args"], "--answer-within")
	if d, err := time.ParseDuration(was); err != nil || d < tools.MinAnswerWithin || d > tools.MaxAnswerWithin || strings.HasPrefix(was, "--") {
		return []string{fmt.Sprintf("the entry's --answer-within %q is dropped: buildguard mcp refuses it (it takes a duration from 1s to 10m, such as 50s), so the host could not start the server", was)}
	}
	return []string{fmt.Sprintf("the entry's --answer-within %s is dropped, so a long build's call waits for the whole build; run init with --answer-within %s to keep it", was, was)}
}

// hasArg reports whether args (a []any or []string) hold flag, as
// `--flag` or `--flag=V`.
func hasArg(args any, flag string) bool {
	var list []any
	switch t := args.(type) {
	case []string:
		for _, a := range t {
			list = append(list, a)
		}
	case []any:
		list = t
	}
	return slices.ContainsFunc(list, func(a any) bool {
		s, _ := a.(string)
		return s == flag || strings.HasPrefix(s, flag+"=")
	})
}

// argValue returns the value of flag (`--flag V` or `--flag=V`) in args
// (a []any or []string), or "".
func argValue(args any, flag string) string {
	var list []string
	switch t := args.(type) {
	case []string:
		list = t
	case []any:
		for _, a := range t {
			s, _ := a.(string)
			list = append(list, s)
		}
	}
	for i, a := range list {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
		if a == flag && i+1 < len(list) {
			return list[i+1]
		}
	}
	return ""
}

// errEditBroken marks an edit whose result fails the check before the
// write: a bug, never a property of the user's file.
var errEditBroken = errors.New("hostconfig: internal error, nothing was written")

// decode returns the data of a document of format f; an empty document is
// an empty object.
func decode(f Format, b []byte) (map[string]any, error) { return f.syntax().decode(b) }

// sameExceptOurs checks that after carries e in container.buildguard and
// equals before in everything else.
func sameExceptOurs(before, after map[string]any, container string, e Entry) error {
	servers, _ := after[container].(map[string]any)
	entry, _ := servers[EntryName].(map[string]any)
	if entry == nil {
		return fmt.Errorf("no %s.%s object", container, EntryName)
	}
	owned := e.fields()
	for _, f := range owned {
		if !equalData(normalize(entry[f.key]), normalize(f.value)) {
			return fmt.Errorf("%s is %v, want %v", f.key, entry[f.key], f.value)
		}
	}
	strip(after, container, owned, before)
	strip(before, container, owned, nil)
	if !equalData(before, after) {
		return errors.New("other settings changed")
	}
	return nil
}

// strip removes the owned keys from doc's entry and, when ref (the
// document before) had no entry or servers table, the ones the edit added.
func strip(doc map[string]any, container string, owned []field, ref map[string]any) {
	servers, _ := doc[container].(map[string]any)
	entry, _ := servers[EntryName].(map[string]any)
	if entry == nil {
		return
	}
	for _, f := range owned {
		delete(entry, f.key)
	}
	if ref == nil {
		return
	}
	refServers, hadServers := ref[container].(map[string]any)
	if _, hadEntry := refServers[EntryName]; !hadEntry && len(entry) == 0 {
		delete(servers, EntryName)
	}
	if !hadServers && len(servers) == 0 {
		delete(doc, container)
	}
}

// equalData is reflect.DeepEqual over decoded documents, except that a NaN
// equals a NaN (TOML has nan).
func equalData(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalData(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalData(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	}
	return reflect.DeepEqual(a, b)
}

func normalize(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out
	}
	return v
}

// field is one owned key with its value: a string or a []string.
type field struct {
	key   string
	value any
}

// fields lists the owned keys in the order a new entry has them.
func (e Entry) fields() []field {
	var fs []field
	if e.Type != "" {
		fs = append(fs, field{"type", e.Type})
	}
	fs = append(fs, field{"command", e.Command}, field{"args", e.Args})
	if e.TimeoutKey != "" {
		fs = append(fs, field{e.TimeoutKey, e.Timeout})
	}
	return fs
}
