package agentproto_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/fakeagent"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/transcripts")

// recorder is a loopback proxy between a client and an agent that writes
// down every line in both directions, in the order it crossed.
type recorder struct {
	mu    sync.Mutex
	lines []string
	wg    sync.WaitGroup
}

func (r *recorder) add(dir, line string) {
	r.mu.Lock()
	r.lines = append(r.lines, dir+" "+line)
	r.mu.Unlock()
}

// proxy listens on loopback and forwards one connection to the agent port.
func (r *recorder) proxy(t *testing.T, agentPort int) int {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); r.wg.Wait() })
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		a, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", agentPort))
		if err != nil {
			c.Close()
			return
		}
		var inner sync.WaitGroup
		inner.Add(2)
		pump := func(dst, src net.Conn, dir string) {
			defer inner.Done()
			br := bufio.NewReader(src)
			for {
				line, err := br.ReadString('\n')
				if line != "" {
					r.add(dir, strings.TrimSuffix(line, "\n"))
					dst.Write([]byte(line))
				}
				if err != nil {
					dst.Close()
					src.Close()
					return
				}
			}
		}
		go pump(a, c, "->")
		go pump(c, a, "<-")
		inner.Wait()
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

var (
	uuidRE      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestampRE = regexp.MustCompile(`"timestamp":"[^"]*"`)
	instantRE   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	pidRE       = regexp.MustCompile(`(\\"pid\\":\\")\d+`)
)

// normalize replaces what differs between runs: tokens, session ids,
// timestamps, the pid and temporary paths.
func normalize(lines []string, dir string) string {
	ids := map[string]string{}
	var b strings.Builder
	for _, l := range lines {
		l = strings.ReplaceAll(l, dir, "$DIR")
		l = uuidRE.ReplaceAllStringFunc(l, func(u string) string {
			if _, ok := ids[u]; !ok {
				ids[u] = fmt.Sprintf("<uuid-%d>", len(ids)+1)
			}
			return ids[u]
		})
		l = timestampRE.ReplaceAllString(l, `"timestamp":"<ts>"`)
		l = instantRE.ReplaceAllString(l, "<instant>")
		l = pidRE.ReplaceAllString(l, "${1}<pid>")
		b.WriteString(l + "\n")
	}
	return b.String()
}

// TestTranscripts runs each client operation against the fake agent through
// a recording proxy and compares the exchange with testdata/transcripts.
// Run with -update to rewrite them.
func TestTranscripts(t *testing.T) {
	const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	cases := []struct {
		name string
		opts []fakeagent.Option
		op   func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error)
	}{
		{"build-started-ok", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			if err := c.Build(ctx, agentproto.BuildStarted, "fixture-owner"); err != nil {
				return "", err
			}
			return "", c.Build(ctx, agentproto.BuildOK, "fixture-owner")
		}},
		{"build-failed-keeps-hold", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			if err := c.Build(ctx, agentproto.BuildStarted, "fixture-owner"); err != nil {
				return "", err
			}
			err := c.Build(ctx, agentproto.BuildFailed, "fixture-owner")
			return a.HoldState(), err
		}},
		{"build-rejected", []fakeagent.Option{fakeagent.WithHold("other-owner")}, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			return "", c.Build(ctx, agentproto.BuildStarted, "fixture-owner")
		}},
		{"doctor", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			d, err := c.Doctor(ctx)
			if err != nil {
				return "", err
			}
			return d.Status + " " + d.BuildHold, nil
		}},
		{"verify-applied", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			a.SetReceipt("com.acme.A", fakeagent.Receipt{SHA256: sha, Source: "/p/A.class", Status: "applied", Detail: "Reloaded", CompletedAt: "2026-09-08T09:12:44.371Z"})
			r, err := c.Verify(ctx, "com.acme.A", sha)
			if err != nil {
				return "", err
			}
			return r.Status, nil
		}},
		{"verify-not-observed", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			r, err := c.Verify(ctx, "com.acme.B", sha)
			if err != nil {
				return "", err
			}
			return r.Status, nil
		}},
		{"reload-pause-status-resume", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			var out []string
			for _, action := range []string{agentproto.ReloadPause, agentproto.ReloadStatus, agentproto.ReloadResume} {
				st, err := c.Reload(ctx, action)
				if err != nil {
					return "", err
				}
				out = append(out, fmt.Sprintf("%s paused=%t", st.Action, st.Paused))
			}
			return strings.Join(out, "; "), nil
		}},
		{"pending", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			lines, err := c.Query(ctx, "PENDING")
			return strings.Join(lines, " | "), err
		}},
		{"health", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			lines, err := c.Query(ctx, "HEALTH")
			return fmt.Sprintf("%d lines", len(lines)), err
		}},
		{"diagnose", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			lines, err := c.Query(ctx, "DIAGNOSE com.acme.A")
			return fmt.Sprintf("%d lines", len(lines)), err
		}},
		{"scan", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			if err := c.Scan(ctx); err != nil {
				return "", err
			}
			_, err := a.WaitCommand(ctx, "SCAN")
			return "sent", err
		}},
		{"project-gate", nil, func(ctx context.Context, c *agentproto.Conn, a *fakeagent.Server) (string, error) {
			if err := c.ConfirmProject(ctx, a.Dir()); err != nil {
				return "", err
			}
			return "", c.Build(ctx, agentproto.BuildStarted, "fixture-owner")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := fakeagent.NewServer(t, append([]fakeagent.Option{fakeagent.WithHeartbeat(-1), fakeagent.WithSessionID("0b6f6d7e-0000-4000-8000-000000000001")}, tc.opts...)...)
			rec := &recorder{}
			port := rec.proxy(t, a.Port())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := agentproto.Dial(ctx, port)
			if err != nil {
				t.Fatal(err)
			}
			result, err := tc.op(ctx, c, a)
			if err != nil {
				result = "error: " + err.Error()
			}
			c.Close()
			rec.wg.Wait()
			got := normalize(rec.lines, a.Dir())
			file := filepath.Join("testdata", "transcripts", tc.name+".txtar")
			if *update {
				ar := &txtar.Archive{Comment: []byte("Exchange of " + tc.name + " with the fake agent; -> client to agent, <- agent to client.\n"),
					Files: []txtar.File{{Name: "wire", Data: []byte(got)}, {Name: "result", Data: []byte(result + "\n")}}}
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			want := map[string]string{}
			for _, f := range ar.Files {
				want[f.Name] = string(f.Data)
			}
			if diff := cmp.Diff(want["wire"], got); diff != "" {
				t.Errorf("wire transcript differs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want["result"], result+"\n"); diff != "" {
				t.Errorf("result differs (-want +got):\n%s", diff)
			}
		})
	}
}
