package agentproto

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const owner = "fixture-owner"

func TestBuild(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply func(tok string) []string // lines after the command
		want  error
	}{
		{"ack", func(tok string) []string {
			return []string{info("Build started; holding 0 class files until BUILD ok"), info("BUILD_ACK " + tok + " started owner=" + owner)}
		}, nil},
		{"noise and stale token first", func(tok string) []string {
			return []string{`{"level":"HEARTBEAT","message":"","timestamp":"t"}`, `{"level":"RELOAD","message":"Reloaded A"}`,
				info("BUILD_ACK stale started owner=" + owner), `{"level":"WARN","message":"BUILD_ACK ` + tok + ` started owner=` + owner + `"}`,
				info("BUILD_ACK " + tok + " started owner=" + owner)}
		}, nil},
		{"rejected", func(tok string) []string { return []string{info("BUILD_REJECTED " + tok + " started owner=" + owner)} }, ErrRejected},
		{"ack without owner suffix is a protocol fault", func(tok string) []string { return []string{info("BUILD_ACK " + tok + " started")} }, ErrNoOwner},
		{"rejection without owner suffix is a protocol fault", func(tok string) []string { return []string{info("BUILD_REJECTED " + tok + " started")} }, ErrNoOwner},
		{"ack for another owner", func(tok string) []string { return []string{info("BUILD_ACK " + tok + " started owner=other")} }, ErrTimeout},
		{"ack for another state", func(tok string) []string { return []string{info("BUILD_ACK " + tok + " ok owner=" + owner)} }, ErrTimeout},
		{"silence", func(string) []string { return nil }, ErrTimeout},
		{"disconnect", func(string) []string { return []string{"<close>"} }, ErrDisconnected},
		{"partial line then close", func(string) []string { return []string{"<raw>{\"level\":\"INFO\",\"mess", "<close>"} }, ErrDisconnected},
		{"not JSON", func(string) []string { return []string{"hello"} }, ErrInvalidResponse},
		{"oversized line", func(string) []string { return []string{info(strings.Repeat("x", 20000))} }, ErrTooLong},
		{"split across writes", func(tok string) []string {
			l := info("BUILD_ACK " + tok + " started owner=" + owner)
			return []string{"<raw>" + l[:10], "<raw>" + l[10:30], "<raw>" + l[30:] + "\r\n"}
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 1)
			port := serve(t, func(p *peer) {
				p.line(connected)
				cmd := p.command()
				got <- cmd
				for _, l := range tc.reply(token(cmd)) {
					switch {
					case l == "<close>":
						return
					case strings.HasPrefix(l, "<raw>"):
						p.write(strings.TrimPrefix(l, "<raw>"))
						time.Sleep(5 * time.Millisecond)
					default:
						p.line(l)
					}
				}
				p.command()
			})
			c := dial(t, port)
			err := c.Build(ctxFor(t, 300*time.Millisecond), BuildStarted, owner)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Build = %v, want %v", err, tc.want)
			}
			cmd := <-got
			if want := "BUILD started request=" + token(cmd) + " owner=" + owner; cmd != want || len(token(cmd)) != 36 {
				t.Errorf("agent received %q, want %q with a UUID token", cmd, want)
			}
		})
	}
}

func doctorJSON(tok string, edit func(m map[string]string)) string {
	m := map[string]string{
		"requestId": `"` + tok + `"`, "status": `"observed"`, "detail": `"Point-in-time evidence; not reload proof."`,
		"sessionId": `"0b6f6d7e-0000-4000-8000-000000000001"`, "agentVersion": `"1.1.1"`, "pid": `"48213"`,
		"javaVersion": `"17.0.15"`, "vmName": `"OpenJDK 64-Bit Server VM"`, "workingDirectory": `"/p"`,
		"watcherState": `"watching"`, "buildHold": `"none"`, "watchedDirectoryCount": `2`,
		"unwatchableDirectoryCount": `0`, "watchSampleTruncated": `false`,
		"watchedDirectories": `["/p/a/classes","/p/b/classes"]`, "buildOwnershipSupported": `true`,
		"verifySupported": `true`, "scanSupported": `true`, "reloadConfirmed": `false`,
	}
	if edit != nil {
		edit(m)
	}
	order := []string{"requestId", "status", "detail", "sessionId", "agentVersion", "pid", "javaVersion", "vmName",
		"workingDirectory", "watcherState", "buildHold", "watchedDirectoryCount", "unwatchableDirectoryCount",
		"watchSampleTruncated", "watchedDirectories", "buildOwnershipSupported", "verifySupported", "scanSupported", "reloadConfirmed", "extra"}
	var parts []string
	for _, k := range order {
		if v, ok := m[k]; ok {
			parts = append(parts, `"`+k+`":`+v)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// answer serves one correlated command with reply(token) and returns the port.
func answer(t *testing.T, reply func(tok string) string) int {
	return serve(t, func(p *peer) {
		p.line(connected)
		for {
			cmd := p.command()
			if cmd == "" {
				return
			}
			p.line(info(reply(token(cmd))))
		}
	})
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(m map[string]string)
		ok   bool
	}{
		{"valid", nil, true},
		{"extra field passes through", func(m map[string]string) { m["extra"] = `{"x":1}` }, true},
		{"truncated sample", func(m map[string]string) { m["watchedDirectoryCount"] = "9"; m["watchSampleTruncated"] = "true" }, true},
		{"pid number", func(m map[string]string) { m["pid"] = "48213" }, false},
		{"pid zero", func(m map[string]string) { m["pid"] = `"0"` }, false},
		{"count string", func(m map[string]string) { m["watchedDirectoryCount"] = `"2"` }, false},
		{"count too large", func(m map[string]string) { m["unwatchableDirectoryCount"] = "1234567890" }, false},
		{"count below sample", func(m map[string]string) { m["watchedDirectoryCount"] = "1" }, false},
		{"truncated flag inconsistent", func(m map[string]string) { m["watchSampleTruncated"] = "true" }, false},
		{"boolean as string", func(m map[string]string) { m["scanSupported"] = `"true"` }, false},
		{"reloadConfirmed true", func(m map[string]string) { m["reloadConfirmed"] = "true" }, false},
		{"blank session with verify", func(m map[string]string) { m["sessionId"] = `""` }, false},
		{"blank session without verify", func(m map[string]string) { m["sessionId"] = `""`; m["verifySupported"] = "false" }, true},
		{"unknown watcherState", func(m map[string]string) { m["watcherState"] = `"sleeping"` }, false},
		{"unknown buildHold", func(m map[string]string) { m["buildHold"] = `"mine"` }, false},
		{"more than 8 dirs", func(m map[string]string) {
			m["watchedDirectories"] = `["/1","/2","/3","/4","/5","/6","/7","/8","/9"]`
			m["watchedDirectoryCount"] = "9"
		}, false},
		{"257-char path", func(m map[string]string) { m["watchedDirectories"] = `["/` + strings.Repeat("a", 256) + `","/b"]` }, false},
		{"missing field", func(m map[string]string) { delete(m, "vmName") }, false},
		{"long string", func(m map[string]string) { m["vmName"] = `"` + strings.Repeat("v", 513) + `"` }, false},
		{"stale token", func(m map[string]string) { m["requestId"] = `"other"` }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := answer(t, func(tok string) string { return "DOCTOR_RESULT " + tok + " " + doctorJSON(tok, tc.edit) })
			d, err := dial(t, port).Doctor(ctxFor(t, 2*time.Second))
			if !tc.ok {
				if !errors.Is(err, ErrInvalidResponse) {
					t.Fatalf("Doctor = %+v, %v; want ErrInvalidResponse", d, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Doctor: %v", err)
			}
			if d.Status != DoctorObserved || d.PID != "48213" || d.WatchedDirectoryCount < 2 {
				t.Errorf("Doctor = %+v", d)
			}
			if _, ok := d.Raw.Get("extra"); ok != (tc.edit != nil && strings.Contains(tc.name, "extra")) {
				t.Errorf("extra field pass-through = %v", ok)
			}
		})
	}
}

func TestDoctorUnavailable(t *testing.T) {
	t.Parallel()
	port := answer(t, func(tok string) string {
		return "DOCTOR_RESULT " + tok + ` {"requestId":"` + tok + `","status":"unavailable","detail":"Doctor evidence unavailable or exceeds bounded message size"}`
	})
	d, err := dial(t, port).Doctor(ctxFor(t, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := d.Raw.MarshalJSON()
	if d.Status != DoctorUnavailable || !strings.Contains(string(raw), `"status":"unavailable"`) || len(d.Raw) != 3 {
		t.Errorf("Doctor = %+v, raw %s", d, raw)
	}
}

const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func receiptJSON(tok, status, observed, completedAt string) string {
	return fmt.Sprintf(`{"requestId":%q,"sessionId":"s-1","className":"com.acme.A","expectedSha256":%q,"observedSha256":%q,"status":%q,"source":"/p/A.class","detail":"d","completedAt":%q}`,
		tok, sha, observed, status, completedAt)
}

func TestVerify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply func(tok string) string
		want  string // receipt status, or "" for ErrInvalidResponse
	}{
		{"applied", func(tok string) string { return receiptJSON(tok, "applied", sha, "2026-09-08T09:12:44.371Z") }, "applied"},
		{"not observed", func(tok string) string { return receiptJSON(tok, "not_observed", "", "") }, "not_observed"},
		{"mismatch", func(tok string) string { return receiptJSON(tok, "mismatch", strings.Repeat("0", 64), "") }, "mismatch"},
		{"applied with other bytes", func(tok string) string { return receiptJSON(tok, "applied", strings.Repeat("0", 64), "x") }, ""},
		{"applied without completedAt", func(tok string) string { return receiptJSON(tok, "applied", sha, "") }, ""},
		{"unknown status", func(tok string) string { return receiptJSON(tok, "done", sha, "x") }, ""},
		{"wrong class echo", func(tok string) string {
			return strings.Replace(receiptJSON(tok, "running", "", ""), "com.acme.A", "com.acme.B", 1)
		}, ""},
		{"field not a string", func(tok string) string {
			return strings.Replace(receiptJSON(tok, "running", "", ""), `"detail":"d"`, `"detail":1`, 1)
		}, ""},
		{"blank session", func(tok string) string {
			return strings.Replace(receiptJSON(tok, "running", "", ""), `"sessionId":"s-1"`, `"sessionId":" "`, 1)
		}, ""},
		{"invalid JSON suffix", func(tok string) string { return receiptJSON(tok, "running", "", "") + "}" }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := answer(t, func(tok string) string { return "VERIFY_RESULT " + tok + " " + tc.reply(tok) })
			r, err := dial(t, port).Verify(ctxFor(t, 2*time.Second), "com.acme.A", sha)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalidResponse) {
					t.Fatalf("Verify = %+v, %v; want ErrInvalidResponse", r, err)
				}
				return
			}
			if err != nil || r.Status != tc.want {
				t.Fatalf("Verify = %+v, %v; want status %s", r, err, tc.want)
			}
		})
	}
}

func TestReload(t *testing.T) {
	t.Parallel()
	cases := []struct {
		action, rest string
		ok           bool
	}{
		{"pause", "paused=true pendingClasses=0 pendingActions=0 buildHold=none", true},
		{"resume", "paused=false pendingClasses=3 pendingActions=1 buildHold=named", true},
		{"status", "paused=true pendingClasses=1 pendingActions=0 buildHold=legacy", true},
		{"pause", "paused=false pendingClasses=0 pendingActions=0 buildHold=none", false},
		{"resume", "paused=true pendingClasses=0 pendingActions=0 buildHold=none", false},
		{"status", "paused=true pendingClasses=999999999999 pendingActions=0 buildHold=none", false},
		{"status", "paused=true pendingClasses=-1 pendingActions=0 buildHold=none", false},
		{"status", "paused=true pendingClasses=0 pendingActions=0 buildHold=other", false},
		{"status", "paused=true pendingClasses=0 pendingActions=0", false},
	}
	for _, tc := range cases {
		t.Run(tc.action+" "+tc.rest, func(t *testing.T) {
			t.Parallel()
			port := answer(t, func(tok string) string { return "RELOAD_STATE " + tok + " " + tc.action + " " + tc.rest })
			st, err := dial(t, port).Reload(ctxFor(t, 2*time.Second), tc.action)
			if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, ErrInvalidResponse) {
				t.Fatalf("Reload = %+v, %v; ok want %v", st, err, tc.ok)
			}
		})
	}
}

func TestQuery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		lines []string // after the command; "<close>" closes
		want  []string
		err   error
	}{
		{"quiet ends", []string{info("Reclazz 1.1.1, up 3 minutes."), info(`Nothing "quoted" \ here`)}, []string{"Reclazz 1.1.1, up 3 minutes.", `Nothing "quoted" \ here`}, nil},
		{"heartbeat ends", []string{info("a"), `{"level":"HEARTBEAT","message":"","timestamp":"t"}`, info("b")}, []string{"a"}, nil},
		{"heartbeat first is ignored", []string{`{"level":"HEARTBEAT","message":""}`, info("a")}, []string{"a"}, nil},
		{"other levels ignored", []string{`{"level":"RELOAD","message":"Reloaded A"}`, info("a")}, []string{"a"}, nil},
		{"EOF ends", []string{info("a"), "<close>"}, []string{"a"}, nil},
		{"blank INFO", []string{info("a"), info(" ")}, []string{"a"}, ErrInvalidResponse},
		{"not JSON", []string{info("a"), "junk"}, []string{"a"}, ErrInvalidResponse},
		{"nothing then EOF", []string{"<close>"}, nil, ErrNoInfo},
		{"nothing until deadline", nil, nil, ErrNoInfo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := serve(t, func(p *peer) {
				p.line(connected)
				p.command()
				for _, l := range tc.lines {
					if l == "<close>" {
						return
					}
					p.line(l)
				}
				p.command()
			})
			got, err := dial(t, port).Query(ctxFor(t, 1500*time.Millisecond), "PENDING")
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("Query error = %v, want %v", err, tc.err)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConfirmProject(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	project := filepath.Join(root, "A")
	for _, d := range []string{project + "/module/run", root + "/AB"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		wd   string
		ok   bool
	}{
		{"project itself", project, true},
		{"nested", project + "/module/run", true},
		{"sibling with common prefix", root + "/AB", false},
		{"parent", root, false},
		{"relative", "A", false},
		{"missing on this host", project + "/gone", false},
		{"symlink from outside into the project", root + "/into", true},
		{"symlink in the project to outside", project + "/out", false},
		{"dot-dot out of the project", project + "/module/../../AB", false},
	}
	if err := os.Symlink(project+"/module", root+"/into"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root+"/AB", project+"/out"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan []string, 1)
			port := serve(t, func(p *peer) {
				p.line(connected)
				cmd := p.command()
				tok := token(cmd)
				p.line(info("DOCTOR_RESULT " + tok + " " + doctorJSON(tok, func(m map[string]string) { m["workingDirectory"] = fmt.Sprintf("%q", tc.wd) })))
				got <- []string{cmd}
				p.command()
			})
			err := dial(t, port).ConfirmProject(ctxFor(t, 2*time.Second), project)
			if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, ErrProjectNotConfirmed) {
				t.Fatalf("ConfirmProject = %v, ok want %v", err, tc.ok)
			}
			if cmds := <-got; !strings.HasPrefix(cmds[0], "DOCTOR ") {
				t.Errorf("gate sent %q", cmds)
			}
		})
	}
}

func TestEndpointResolve(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(base, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("proj/.idea/reclazz/agent.port", "4001")
	write("both/.reclazz/agent.port", " 4002\n")
	write("both/.idea/reclazz/agent.port", "4003")
	write("bad/.reclazz/agent.port", "abc")
	write("range/.reclazz/agent.port", "70000")
	write("hy/.reclazz/agent.port", "4004")
	os.MkdirAll(filepath.Join(base, "dirfile"), 0o755)
	cases := []struct {
		name string
		e    Endpoint
		port int
		err  string
	}{
		{"port wins", Endpoint{Port: " 4000 ", PortFile: "nope", Base: base}, 4000, ""},
		{"port plus sign", Endpoint{Port: "+4000"}, 4000, ""},
		{"port unparsable", Endpoint{Port: "4x"}, 0, "invalid port: 4x"},
		{"port out of range", Endpoint{Port: "65536"}, 65536, "invalid port: 65536"},
		{"port negative", Endpoint{Port: "-1"}, -1, "invalid port: -1"},
		{"port beyond int32", Endpoint{Port: "99999999999"}, 0, "invalid port: 99999999999"},
		{"port file relative to base", Endpoint{PortFile: "both/.reclazz/agent.port", Base: base}, 4002, ""},
		{"port file missing never falls back", Endpoint{PortFile: "missing", Base: filepath.Join(base, "both")}, 0, ErrNoPortFile.Error()},
		{"port file is a directory", Endpoint{PortFile: "dirfile", Base: base}, 0, ErrNoPortFile.Error()},
		{"port file unreadable", Endpoint{PortFile: "bad/.reclazz/agent.port", Base: base}, 0, "unreadable port file: " + filepath.Join(base, "bad/.reclazz/agent.port")},
		{"port file out of range", Endpoint{Base: filepath.Join(base, "range")}, 70000, "invalid port: 70000"},
		{"hybris home", Endpoint{HybrisHome: "hy", Base: base}, 4004, ""},
		{"hybris home missing", Endpoint{HybrisHome: "proj", Base: base}, 0, ErrNoPortFile.Error()},
		{"discovery prefers .reclazz", Endpoint{Base: filepath.Join(base, "both")}, 4002, ""},
		{"discovery falls to .idea", Endpoint{Base: filepath.Join(base, "proj")}, 4001, ""},
		{"nothing to discover", Endpoint{Base: filepath.Join(base, "dirfile")}, 0, ErrNoPortFile.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			port, err := tc.e.Resolve()
			if port != tc.port || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
				t.Errorf("Resolve() = %d, %v; want %d, %q", port, err, tc.port, tc.err)
			}
		})
	}
}

// Discard drops lines until its context ends, keeps a line cut off at that
// moment, and leaves the connection ready for the next request.
func TestDiscard(t *testing.T) {
	t.Parallel()
	proceed := make(chan struct{})
	port := serve(t, func(p *peer) {
		p.line(connected)
		for i := 0; i < 500; i++ {
			p.line(info(fmt.Sprintf("broadcast %d", i)))
		}
		ack := info("BUILD_ACK TOKEN started owner=" + owner)
		p.write(`{"level":"HEARTBEAT","mess`) // cut off mid-line when the reading stops
		<-proceed
		p.line(`age":"","timestamp":"t"}`)
		cmd := p.command()
		p.line(strings.Replace(ack, "TOKEN", token(cmd), 1))
		p.command()
	})
	var once sync.Once
	release := func() { once.Do(func() { close(proceed) }) }
	t.Cleanup(release)
	c := dial(t, port)
	// Discarding ends with its context (a deadline here); by then it has
	// read the broadcasts and stopped inside the cut-off line.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.Discard(ctx); err != nil {
		t.Fatalf("Discard = %v, want nil when its context ends", err)
	}
	// It read every broadcast and stopped inside the cut-off line, which it kept.
	if got := string(c.partial); got != `{"level":"HEARTBEAT","mess` {
		t.Fatalf("after Discard the unfinished line is %q", got)
	}
	release()
	if err := c.Build(ctxFor(t, 2*time.Second), BuildStarted, owner); err != nil {
		t.Fatalf("Build after Discard: %v", err)
	}
}

func TestDiscardReportsADisconnect(t *testing.T) {
	t.Parallel()
	port := serve(t, func(p *peer) { p.line(connected); p.line(info("bye")) })
	if err := dial(t, port).Discard(ctxFor(t, 2*time.Second)); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("Discard = %v, want ErrDisconnected", err)
	}
}
