//go:build unix

package refagent_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/jvm"
	"github.com/buildguard/buildguard/harness/refagent"
	"github.com/buildguard/buildguard/service/safebuild"
)

// loaderApp loads classes C000 … C<n-1> of the default package, prints
// LOADED <n> and keeps running, so that every one of them can be redefined.
const loaderApp = `public class Loader {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Object[] keep = new Object[n];
        for (int i = 0; i < n; i++) {
            keep[i] = Class.forName(String.format("C%03d", i)).getDeclaredConstructor().newInstance();
        }
        System.out.println("LOADED " + n);
        System.out.flush();
        while (keep.length > 0) {
            Thread.sleep(1000);
        }
    }
}
`

// classSources is the sources of C000 … C<n-1>, each value() returning v
// (plus its index, so that no two classes have the same bytes).
func classSources(n, v int) map[string]string {
	src := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("C%03d", i)
		src[name+".java"] = fmt.Sprintf("public class %s {\n    public int value() {\n        return %d;\n    }\n}\n", name, v*1000+i)
	}
	return src
}

// writeClasses writes class files (file name → bytes) into a new directory.
func writeClasses(t testing.TB, classes map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range classes {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// buildOKProxy forwards loopback connections to the agent on port and notes
// when a "BUILD ok" command passes through it, when the agent's
// acknowledgement of it passes back (the moment the proof's time is counted
// from), and the agent's first report that a reload batch ended, with the
// milliseconds it says the batch took.
type buildOKProxy struct {
	ln       net.Listener
	mu       sync.Mutex
	okAt     time.Time
	ackAt    time.Time
	reportAt time.Time
	reportMs int
	reportRE *regexp.Regexp
}

// buildOKAck matches the agent's acknowledgement of a BUILD ok command
// (docs/agent-protocol.md#5).
var buildOKAck = regexp.MustCompile(`"message":"BUILD_ACK \S+ ok[ "]`)

func newBuildOKProxy(t testing.TB, port string) *buildOKProxy {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &buildOKProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c, port)
		}
	}()
	return p
}

func (p *buildOKProxy) forward(c net.Conn, port string) {
	defer c.Close()
	a, err := net.DialTimeout("tcp", "127.0.0.1:"+port, limit)
	if err != nil {
		return
	}
	defer a.Close()
	go p.back(a, c)
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, "BUILD ok ") {
			p.mu.Lock()
			p.okAt = time.Now()
			p.mu.Unlock()
		}
		if _, werr := io.WriteString(a, line); err != nil || werr != nil {
			return
		}
	}
}

// back forwards the agent's lines to the client, noting the
// acknowledgement of BUILD ok and the report of the batch's end.
func (p *buildOKProxy) back(a, c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(a)
	for {
		line, err := r.ReadString('\n')
		now := time.Now()
		p.mu.Lock()
		switch {
		case buildOKAck.MatchString(line):
			p.ackAt = now
		case p.reportRE != nil && p.reportAt.IsZero() && !p.okAt.IsZero():
			if m := p.reportRE.FindStringSubmatch(line); m != nil {
				p.reportAt = now
				p.reportMs, _ = strconv.Atoi(m[1])
			}
		}
		p.mu.Unlock()
		if _, werr := io.WriteString(c, line); err != nil || werr != nil {
			return
		}
	}
}

func (p *buildOKProxy) port() string { return strconv.Itoa(p.ln.Addr().(*net.TCPAddr).Port) }

func (p *buildOKProxy) sinceBuildOK() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Since(p.okAt)
}

// expect forgets what the last build noted and, for the next, looks for
// the agent's report of a batch of n classes: "Reloaded <class> (<ms>ms)"
// for one class, "Batch of <n> class files done (<ms>ms)" for more.
func (p *buildOKProxy) expect(n int) {
	re := `"message":"Reloaded \S+ \((\d+)ms\)"`
	if n > 1 {
		re = `"message":"Batch of ` + strconv.Itoa(n) + ` class files done \((\d+)ms\)"`
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.okAt, p.ackAt, p.reportAt, p.reportMs = time.Time{}, time.Time{}, time.Time{}, 0
	p.reportRE = regexp.MustCompile(re)
}

// noted is what the proxy noted of the last build: when BUILD ok's
// acknowledgement and the batch's report passed, and the batch's own
// milliseconds as the agent reported them; a zero time when none passed.
func (p *buildOKProxy) noted() (ackAt, reportAt time.Time, reportMs int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ackAt, p.reportAt, p.reportMs
}

// A guarded build that changes 512 classes a live JVM has loaded is proven
// against the reference agent: every class is verified and applied
// (docs/decisions.md#D24); a one-class change after it too. Before them, a
// clean build (the same bytes written again, which the agent never
// reloads) is answered once the agent settled, not at the end of the
// wait. The time from BUILD ok to each answer is logged, never asserted.
func TestSafeBuildProves512ClassesWithTheReferenceAgent(t *testing.T) {
	t.Parallel()
	const n = safebuild.MaxVerifiedClasses
	jar := agentJar(t)
	java := requireTool(t, "java")
	root := t.TempDir()
	out := filepath.Join(root, "classes")
	appDir := filepath.Join(root, "app")
	portFile := filepath.Join(root, "agent.port")
	for _, d := range []string{out, appDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	v1 := compileJava(t, classSources(n, 1))
	for name, b := range v1 {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v2 := writeClasses(t, compileJava(t, classSources(n, 2)))
	v3 := compileJava(t, map[string]string{"C007.java": classSources(8, 3)["C007.java"]})
	one := writeClasses(t, v3)
	loader := compileJava(t, map[string]string{"Loader.java": loaderApp})
	if err := os.WriteFile(filepath.Join(appDir, "Loader.class"), loader["Loader.class"], 0o644); err != nil {
		t.Fatal(err)
	}

	flag, err := refagent.AgentFlag(jar, refagent.Options{WatchDirs: []string{out}, PortFile: portFile, StartupDelaySec: 0, DebounceMs: 100})
	if err != nil {
		t.Fatal(err)
	}
	proc := startJVM(t, java, root, flag, "-cp", out+string(os.PathListSeparator)+appDir, "Loader", strconv.Itoa(n))
	log := lineLog{proc.Lines()}
	log.waitFor(t, 0, "LOADED 512", func(s string) bool { return s == "LOADED "+strconv.Itoa(n) })
	log.waitFor(t, 0, "with '] Watching '", func(s string) bool { return strings.Contains(s, "] Watching ") })
	b, err := os.ReadFile(portFile)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newBuildOKProxy(t, string(b))

	builder := safebuild.New(safebuild.Config{})
	run := func(t *testing.T, from string) *safebuild.Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res := builder.Run(ctx, safebuild.Request{
			Dir:      root,
			Build:    safebuild.Build{Name: "copy", Command: []string{"cp", "-R", from + "/.", out}, Timeout: time.Minute},
			Endpoint: agentproto.Endpoint{Port: proxy.port()},
		})
		t.Logf("answer %v after BUILD ok", proxy.sinceBuildOK())
		return res
	}

	// A clean build: every class file written again with the bytes the
	// JVM runs. The agent makes no attempt for identical bytes
	// (docs/agent-protocol.md#8), so no receipt can come, and the answer
	// says so once the agent settled instead of at the end of the wait.
	same := writeClasses(t, v1)
	start := time.Now()
	res := run(t, same)
	t.Logf("clean build: %v in all; %s", time.Since(start), res.Detail)
	if cc := res.ChangedClasses; res.Outcome != safebuild.OutcomeOK || cc.Count != n || cc.AllApplied {
		t.Fatalf("clean build: outcome %s, changedClasses count %d allApplied %v: %s", res.Outcome, cc.Count, cc.AllApplied, res.Detail)
	}
	if want := fmt.Sprintf("the %d receipts not_observed or mismatch are final", n); !strings.Contains(res.Detail, want) {
		t.Errorf("clean build: detail %q does not say %q", res.Detail, want)
	}
	// A generous bound, below the verification's wait of 15 s.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the clean build was answered after %v: it waited for receipts that cannot come", d)
	}

	res = run(t, v2)
	cc := res.ChangedClasses
	if res.Outcome != safebuild.OutcomeOK || cc.Count != n || !cc.Complete || !cc.AllApplied || len(cc.Classes) != safebuild.MaxChangedClasses {
		t.Fatalf("outcome %s, changedClasses count %d complete %v allApplied %v listed %d: %s",
			res.Outcome, cc.Count, cc.Complete, cc.AllApplied, len(cc.Classes), res.Detail)
	}
	if want := fmt.Sprintf("all %d changed classes were verified", n); !strings.Contains(res.Detail, want) {
		t.Errorf("detail %q does not say %q", res.Detail, want)
	}

	res = run(t, one)
	cc = res.ChangedClasses
	if res.Outcome != safebuild.OutcomeOK || cc.Count != 1 || !cc.AllApplied || len(cc.Classes) != 1 ||
		cc.Classes[0].ClassName != "C007" || cc.Classes[0].SHA256 != sha(v3["C007.class"]) {
		t.Fatalf("outcome %s, changedClasses %+v: %s", res.Outcome, cc, res.Detail)
	}
}

// startJVM starts java with args in dir and kills it when the test ends.
func startJVM(t testing.TB, java, dir string, args ...string) *jvm.Process {
	t.Helper()
	p, err := jvm.Start(jvm.Config{Java: java, Args: args, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Kill(); err != nil {
			t.Error(err)
		}
	})
	return p
}
