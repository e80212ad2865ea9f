package agentproto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/iotest"
)

// The parsers face whatever an agent (or something that is not one) sends:
// they must never panic, and must never accept what the rules reject.

func FuzzParseHandshake(f *testing.F) {
	f.Add([]byte(connected))
	f.Add([]byte(`{"level":"CONNECTED","version":1.0,"agent":"a"}`))
	f.Add([]byte(`{"level":"CONNECTED","version":"1","agent":" "}`))
	f.Add([]byte("\ufeff{}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		agent, err := parseHandshake(line)
		if err == nil && strings.TrimSpace(agent) == "" {
			t.Fatalf("accepted a blank agent from %q", line)
		}
	})
}

func FuzzParseDoctor(f *testing.F) {
	f.Add(doctorJSON("t", nil))
	f.Add(doctorJSON("t", func(m map[string]string) { m["watchedDirectoryCount"] = "9"; m["watchSampleTruncated"] = "true" }))
	f.Add(`{"requestId":"t","status":"unavailable","detail":"x"}`)
	f.Fuzz(func(t *testing.T, payload string) {
		d, err := parseDoctor("t", payload)
		if err != nil {
			return
		}
		if d.RequestID != "t" || d.Status == DoctorObserved && (len(d.WatchedDirectories) > 8 || d.WatchedDirectoryCount < len(d.WatchedDirectories) || !validPID(d.PID)) {
			t.Fatalf("accepted invalid evidence %q", payload)
		}
		if _, err := d.Raw.MarshalJSON(); err != nil {
			t.Fatalf("accepted evidence does not re-encode: %v", err)
		}
	})
}

func FuzzParseReceipt(f *testing.F) {
	f.Add(receiptJSON("t", "applied", sha, "2026-09-08T09:12:44.371Z"))
	f.Add(receiptJSON("t", "mismatch", strings.Repeat("0", 64), ""))
	f.Fuzz(func(t *testing.T, payload string) {
		r, err := parseReceipt("t", "com.acme.A", sha, payload)
		if err == nil && r.Status == ReceiptApplied && r.ObservedSHA256 != sha {
			t.Fatalf("accepted an applied receipt for other bytes: %q", payload)
		}
	})
}

func FuzzParseReloadState(f *testing.F) {
	f.Add("pause", "paused=true pendingClasses=0 pendingActions=0 buildHold=none")
	f.Add("resume", "paused=false pendingClasses=2147483648 pendingActions=0 buildHold=none")
	f.Fuzz(func(t *testing.T, action, rest string) {
		st, err := parseReloadState(action, rest)
		if err == nil && (st.PendingClasses < 0 || st.PendingActions < 0 || action == ReloadPause && !st.Paused) {
			t.Fatalf("accepted %q for %q", rest, action)
		}
	})
}

// FuzzReadLine feeds arbitrary bytes through the line codec: every line it
// returns is below the size cap and holds no newline.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte(connected + "\r\n" + info("a") + "\n"))
	f.Add(bytes.Repeat([]byte("x"), 3*MaxReplyChars+10))
	f.Add([]byte("a\rb\n\n\xff\xfe\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The codec reads only through the buffered reader; a small buffer
		// makes long lines arrive in many chunks, as from a socket.
		c := &Conn{br: bufio.NewReaderSize(iotest.HalfReader(bytes.NewReader(data)), 16)}
		for {
			line, err := c.readLine()
			if err != nil {
				return
			}
			if UTF16Len(string(line)) >= MaxReplyChars || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("readLine returned an invalid line of %d bytes", len(line))
			}
		}
	})
}

// objectCases are inputs at the edges of the JSON grammar, for the
// comparison of ParseObject with encoding/json.
var objectCases = []string{
	`{"a":1,"b":[{"c":"}"}],"d":"\"x\\","e":null}`,
	` {"k\u00e9y":true , "n":-1.5e3 } `,
	`{"a":1}{}`,
	``, ` `, `{`, `}`, `{}`, ` {} `, `[]`, `1`, `"s"`, `null`, "\ufeff{}",
	`{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a":1 "b":2}`, `{"a":1}x`, `{a:1}`, `{'a':1}`,
	`{"n":-}`, `{"n":-0}`, `{"n":01}`, `{"n":1.}`, `{"n":.5}`, `{"n":1e}`, `{"n":1e+}`, `{"n":1E-2}`, `{"n":-0.0e-0}`, `{"n":+1}`,
	`{"l":tru}`, `{"l":nul}`, `{"l":falsey}`, `{"l":true}`, `{"l":[true,false,null]}`,
	`{"s":"\u12"}`, `{"s":"\u12g4"}`, `{"s":"\x"}`, `{"s":"\/\b\f\n\r\t"}`, "{\"s\":\"\x01\"}", "{\"s\":\"\x1f\"}", "{\"s\":\"\x7f\"}", "{\"s\":\"\xff\"}", "{\"\xff\":1}",
	`{"a":[1,[2,[3]]],"b":{"c":{"d":{}}}}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`,
	`{"dup":1,"dup":2}`, `{"e\"q":1}`,
	"{\"a\":" + strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2) + "}",
	"{\"a\":" + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "}",
	"{\"a\":" + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}",
	"{\"a\":" + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}",
}

// checkParseObject checks ParseObject against encoding/json on data: the
// same accept/reject decision and the same members, except that ParseObject
// also rejects JSON nested deeper than MaxDepth.
func checkParseObject(t *testing.T, data []byte) {
	t.Helper()
	obj, err := ParseObject(data)
	var ref map[string]json.RawMessage
	refErr := json.Unmarshal(data, &ref)
	if refErr == nil && ref != nil && jsonDepth(data) > MaxDepth {
		if err == nil {
			t.Fatalf("ParseObject accepted JSON %d levels deep, more than %d: %.80q", jsonDepth(data), MaxDepth, data)
		}
		return
	}
	if (err == nil) != (refErr == nil && ref != nil) {
		t.Fatalf("ParseObject err=%v, encoding/json err=%v for %q", err, refErr, data)
	}
	if err != nil {
		return
	}
	for _, m := range obj {
		if !bytes.Equal(bytes.TrimSpace(ref[m.Key]), m.Value) {
			t.Fatalf("member %q = %s, encoding/json says %s", m.Key, m.Value, ref[m.Key])
		}
	}
	if len(obj) != len(ref) {
		t.Fatalf("%d members, encoding/json found %d", len(obj), len(ref))
	}
}

// jsonDepth is how deep valid JSON data nests objects and arrays.
func jsonDepth(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func TestParseObjectMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, c := range objectCases {
		checkParseObject(t, []byte(c))
	}
}

// FuzzParseObject checks the one-pass validating scanner against
// encoding/json: the same decision and the same members for any input.
func FuzzParseObject(f *testing.F) {
	for _, c := range objectCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkParseObject(t, data) })
}
