//go:build linux

package integrations

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildguard/buildguard/harness/fakeagent"
	gradleinit "github.com/buildguard/buildguard/integrations/gradle"
	"github.com/buildguard/buildguard/internal/proc"
	"github.com/buildguard/buildguard/internal/testsupport/testbin"
	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// continuousBuildGradle is the continuous fixture's build script. Before the
// first task of every cycle runs, it asks the agent (over its own
// connection) for its state and appends the agent's hold to holds.log: the
// proof that the cycle's hold was taken and acknowledged before any of its
// tasks ran. While a file named block exists, compileJava waits for it to
// go (at most 120 s) after printing "fixture: blocking", so a test can
// interrupt a cycle in the middle.
const continuousBuildGradle = `apply plugin: 'java'
def recorded = false
gradle.taskGraph.beforeTask { task ->
    if (recorded) {
        return
    }
    recorded = true
    Socket s = new Socket('127.0.0.1', findProperty('test.agentPort') as int)
    s.soTimeout = 20000
    def r = new BufferedReader(new InputStreamReader(s.inputStream, 'UTF-8'))
    r.readLine() // CONNECTED
    String tok = UUID.randomUUID().toString()
    s.outputStream.write(("RELOAD status request=" + tok + "\n").getBytes('UTF-8'))
    s.outputStream.flush()
    String line
    while ((line = r.readLine()) != null && !line.contains('RELOAD_STATE ' + tok)) {
    }
    s.close()
    def m = (line ?: '') =~ /buildHold=(\w+)/
    new File(rootDir, 'holds.log') << ("first task " + task.path + ": buildHold=" + (m.find() ? m.group(1) : 'unknown') + "\n")
}
compileJava.doFirst {
    File block = new File(rootDir, 'block')
    if (block.exists()) {
        println 'fixture: blocking'
        long end = System.currentTimeMillis() + 120000
        while (block.exists() && System.currentTimeMillis() < end) {
            Thread.sleep(100)
        }
    }
}
`

// streamWatch collects a stream and lets a test wait for text in it.
type streamWatch struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
	done    chan struct{}
}

func watchStream(r io.Reader) *streamWatch {
	w := &streamWatch{changed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			w.mu.Lock()
			w.buf.WriteString(line)
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return w
}

func (w *streamWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// count is how often s occurs in the stream so far.
func (w *streamWatch) count(s string) int { return strings.Count(w.String(), s) }

// wait waits up to d until s occurs n times.
func (w *streamWatch) wait(t testing.TB, s string, n int, d time.Duration, other *streamWatch) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		found, changed := strings.Count(w.buf.String(), s) >= n, w.changed
		w.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-w.done:
			if w.count(s) < n {
				t.Fatalf("the stream ended without %d× %q:\n%s\nthe other stream:\n%s", n, s, w, other)
			}
		case <-deadline.C:
			t.Fatalf("no %d× %q within %v:\n%s\nthe other stream:\n%s", n, s, d, w, other)
		}
	}
}

// continuousRun is a real buildguard --continuous around real Gradle 4.4.1.
type continuousRun struct {
	dir            string
	cmd            *exec.Cmd
	stdout, stderr *streamWatch
	exited         chan struct{}
	err            error
}

// startContinuous starts buildguard --continuous -- gradle --continuous
// classes in dir.
func startContinuous(t *testing.T, exe, dir, home string, agent *fakeagent.Server) *continuousRun {
	t.Helper()
	return startCommand(t, dir, home, []string{exe, "--port-file", agent.PortFile(), "--owner", "cycle-owner", "--continuous", "--",
		"gradle", "--offline", "--continuous", "-Ptest.agentPort=" + strconv.Itoa(agent.Port()), "classes"})
}

// startCommand starts argv in dir with its own Gradle user home, stdin open
// and idle as a terminal left alone would be; it is stopped at cleanup.
func startCommand(t testing.TB, dir, home string, argv []string) *continuousRun {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = baseEnv("GRADLE_USER_HOME=" + home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &continuousRun{dir: dir, cmd: cmd, stdout: watchStream(outR), stderr: watchStream(errR), exited: make(chan struct{})}
	go func() {
		<-r.stdout.done
		<-r.stderr.done
		r.err = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-r.exited:
		default:
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-r.exited:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-r.exited
			}
		}
	})
	return r
}

// waitExit waits up to d for buildguard to exit and returns its exit code.
func (r *continuousRun) waitExit(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-r.exited:
	case <-time.After(d):
		t.Fatalf("buildguard did not exit within %v\nstdout:\n%s\nstderr:\n%s", d, r.stdout, r.stderr)
	}
	return r.cmd.ProcessState.ExitCode()
}

// cycle waits for the stderr line of cycle n and for Gradle to be watching
// again, so that the next edit starts the next cycle.
func (r *continuousRun) cycle(t *testing.T, n int) string {
	t.Helper()
	prefix := "buildguard: cycle " + strconv.Itoa(n) + " "
	r.stderr.wait(t, prefix, 1, 3*time.Minute, r.stdout)
	r.stdout.wait(t, "Waiting for changes to input files", n, time.Minute, r.stderr)
	for _, l := range strings.Split(r.stderr.String(), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func (r *continuousRun) writeSource(t *testing.T, body string) {
	t.Helper()
	writeFiles(t, r.dir, map[string]string{"src/main/java/p/A.java": "package p;\npublic class A { " + body + " }\n"})
}

// holds is the fixture's record of the agent's hold before each cycle's
// first task.
func holds(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "holds.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(b), "first task :compileJava: ", ""))
}

// agentSequence is the agent's BUILD commands and the fixture's RELOAD
// status requests, in arrival order.
func agentSequence(agent *fakeagent.Server) string {
	var seq []string
	for _, l := range agent.Commands() {
		f := strings.Fields(l)
		switch {
		case len(f) > 1 && f[0] == "BUILD":
			seq = append(seq, f[1])
		case len(f) > 1 && f[0] == "RELOAD":
			seq = append(seq, "task")
		}
	}
	return strings.Join(seq, ",")
}

// rejectedStarts stands for a refused cycle's `BUILD started`, which the
// wrapper asks again for 3 s before it refuses the cycle, in case the hold
// before is being handed over (docs/decisions.md#D18).
const rejectedStarts = `started(,started)*`

// matchSequence checks agentSequence against the regular expression want.
func matchSequence(t *testing.T, agent *fakeagent.Server, want string) {
	t.Helper()
	if got := agentSequence(agent); !regexp.MustCompile("^" + want + "$").MatchString(got) {
		t.Errorf("agent saw %s, want %s", got, want)
	}
}

var cycleLineRE = regexp.MustCompile(`^buildguard: cycle (\d+) (ok|failed) in \d[^;]*; output (released|held until a cycle succeeds)$`)

// TestContinuousGradle runs buildguard --continuous around a real
// continuous Gradle 4.4.1 build (with its daemon) and the fake agent, and
// drives its cycles by editing a source file (docs/decisions.md#D20).
func TestContinuousGradle(t *testing.T) {
	requireTool(t, "gradle", "java", "go")
	base := realDir(t, t.TempDir())
	exe := testbin.Build(t, filepath.Join(base, "bin"))
	home := filepath.Join(base, "gradle home")
	t.Cleanup(func() { stopGradleDaemons(t, home) })
	project := func(t *testing.T, name string) string {
		dir := filepath.Join(base, name)
		writeFiles(t, dir, map[string]string{
			"settings.gradle":        "rootProject.name = 'demo'\n",
			"build.gradle":           continuousBuildGradle,
			"src/main/java/p/A.java": "package p;\npublic class A {}\n",
			// A small daemon that ends itself if the cleanup never runs.
			"gradle.properties": "org.gradle.jvmargs=-Xmx256m\norg.gradle.daemon.idletimeout=180000\n",
		})
		return dir
	}

	// Good, failing, good: started/ok, started/failed, started/ok, each
	// start acknowledged before the first task of its cycle ran.
	t.Run("three cycles", func(t *testing.T) {
		dir := project(t, "three cycles")
		agent := fakeagent.NewServer(t)
		r := startContinuous(t, exe, dir, home, agent)
		lines := []string{r.cycle(t, 1)}
		r.writeSource(t, "int broken")
		lines = append(lines, r.cycle(t, 2))
		r.writeSource(t, "int fixed;")
		lines = append(lines, r.cycle(t, 3))

		want := []string{"1 ok released", "2 failed held until a cycle succeeds", "3 ok released"}
		for i, l := range lines {
			m := cycleLineRE.FindStringSubmatch(l)
			if m == nil || strings.Join(m[1:], " ") != want[i] {
				t.Errorf("cycle line %q, want cycle %s", l, want[i])
			}
		}
		if got, want := agentSequence(agent), "started,task,ok,started,task,failed,started,task,ok"; got != want {
			t.Errorf("agent saw %s, want %s", got, want)
		}
		if got := holds(t, dir); strings.Join(got, " ") != "buildHold=named buildHold=named buildHold=named" {
			t.Errorf("the agent's hold before each cycle's first task: %q, want named three times", got)
		}
		if holding, _ := agent.Hold(); holding {
			t.Error("the agent still holds after the good third cycle")
		}
		if _, err := os.Stat(filepath.Join(dir, "build/classes/java/main/p/A.class")); err != nil {
			t.Errorf("the last cycle did not compile: %v", err)
		}
		if n := r.stderr.count("build owner: cycle-owner"); n != 1 {
			t.Errorf("the owner line came %d times, want once for the run", n)
		}

		r.cmd.Process.Signal(syscall.SIGINT)
		if code := r.waitExit(t, time.Minute); code != 130 {
			t.Errorf("exit %d after SIGINT between cycles, want 130\nstderr:\n%s", code, r.stderr)
		}
		mustContain(t, "stderr", r.stderr.String(), "buildguard: continuous build interrupted (interrupt) after 3 cycles; no output is held")
		if got := agentSequence(agent); strings.Count(got, "failed") != 1 {
			t.Errorf("agent saw %s: a BUILD failed for the interrupt between cycles, want none", got)
		}
	})

	// Ctrl-C while a cycle runs: the Gradle client's process group ends,
	// BUILD failed is acknowledged and the output stays held.
	t.Run("ctrl-c mid-cycle", func(t *testing.T) {
		dir := project(t, "ctrl-c")
		agent := fakeagent.NewServer(t)
		r := startContinuous(t, exe, dir, home, agent)
		r.cycle(t, 1)
		writeFiles(t, dir, map[string]string{"block": "wait\n"})
		t.Cleanup(func() { os.Remove(filepath.Join(dir, "block")) })
		r.writeSource(t, "int x;")
		r.stdout.wait(t, "fixture: blocking", 1, 3*time.Minute, r.stderr)
		pid := r.cmd.Process.Pid
		childGroup := gradleClientGroup(t, pid)

		r.cmd.Process.Signal(syscall.SIGINT)
		if code := r.waitExit(t, time.Minute); code != 130 {
			t.Errorf("exit %d after SIGINT mid-cycle, want 130\nstderr:\n%s", code, r.stderr)
		}
		if got, want := agentSequence(agent), "started,task,ok,started,task,failed"; got != want {
			t.Errorf("agent saw %s, want %s", got, want)
		}
		if holding, owner := agent.Hold(); !holding || owner != "cycle-owner" {
			t.Errorf("agent hold = %v %q, want held for cycle-owner", holding, owner)
		}
		mustContain(t, "stderr", r.stderr.String(), "buildguard: cycle 2 ")
		mustContain(t, "stderr", r.stderr.String(), "after 2 cycles; the output stays held for this owner")
		if members, err := proc.GroupMembers(childGroup); err != nil || len(members) != 0 {
			t.Errorf("the Gradle client's process group %d still has %v (%v)", childGroup, members, err)
		}
	})

	// A copy of the init script in the Gradle user home's init.d applies it
	// a second time to every cycle, which does nothing; -qt is continuous,
	// and a trailing "--" leaves buildguard's options before it.
	t.Run("init.d copy, -qt and --", func(t *testing.T) {
		dir := project(t, "init.d copy")
		initD := filepath.Join(home, "init.d")
		writeFiles(t, initD, map[string]string{"buildguard-cycles.init.gradle": string(gradleinit.CyclesInitScript)})
		t.Cleanup(func() { os.RemoveAll(initD) })
		agent := fakeagent.NewServer(t)
		r := startCommand(t, dir, home, []string{exe, "--port-file", agent.PortFile(), "--owner", "cycle-owner", "--continuous", "--",
			"gradle", "--offline", "-qt", "-Ptest.agentPort=" + strconv.Itoa(agent.Port()), "classes", "--"})
		lines := []string{r.cycle(t, 1)}
		r.writeSource(t, "int v;")
		lines = append(lines, r.cycle(t, 2))
		for i, l := range lines {
			if m := cycleLineRE.FindStringSubmatch(l); m == nil || m[2] != "ok" {
				t.Errorf("cycle %d line %q, want ok and released\nstdout:\n%s\nstderr:\n%s", i+1, l, r.stdout, r.stderr)
			}
		}
		if got, want := agentSequence(agent), "started,task,ok,started,task,ok"; got != want {
			t.Errorf("agent saw %s, want %s", got, want)
		}
		r.cmd.Process.Signal(syscall.SIGINT)
		if code := r.waitExit(t, time.Minute); code != 130 {
			t.Errorf("exit %d after SIGINT, want 130\nstderr:\n%s", code, r.stderr)
		}
		if strings.Contains(r.stdout.String()+r.stderr.String(), "refused") {
			t.Errorf("a cycle was refused:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
	})

	// The agent refuses a cycle's start (another owner holds): the init
	// script fails the cycle before any task, and Gradle 4.4.1 keeps
	// watching the inputs of the cycle's tasks, so the next change starts
	// the next cycle, which runs once the other owner's hold is gone.
	t.Run("refused start", func(t *testing.T) {
		dir := project(t, "refused")
		agent := fakeagent.NewServer(t)
		r := startContinuous(t, exe, dir, home, agent)
		r.cycle(t, 1)
		agent.SetHold("other-owner")
		r.writeSource(t, "int y;")
		r.stderr.wait(t, "buildguard: cycle 2 refused after ", 1, 3*time.Minute, r.stdout)
		r.stdout.wait(t, "Waiting for changes to input files", 2, time.Minute, r.stderr)
		errText := r.stderr.String()
		mustContain(t, "stderr", errText, "no task of it ran, nothing released: build refused: BUILD started was not acknowledged")
		// Gradle reports the failed cycle on its stderr, which reaches this
		// test through a pipe of its own: it may come after stdout's line.
		const refusedCycle = "buildguard refused this cycle: cycle 2: build refused"
		wait.For(t, time.Minute, "Gradle's output names the refused cycle", func() bool {
			return strings.Contains(r.stdout.String()+r.stderr.String(), refusedCycle)
		})
		matchSequence(t, agent, "started,task,ok,"+rejectedStarts)
		if got := holds(t, dir); len(got) != 1 {
			t.Errorf("holds.log %q: a task of the refused cycle ran", got)
		}
		if holding, owner := agent.Hold(); !holding || owner != "other-owner" {
			t.Errorf("agent hold = %v %q, want still other-owner's", holding, owner)
		}

		agent.ReleaseHold()
		r.writeSource(t, "int w;")
		if l := r.cycle(t, 3); !strings.HasPrefix(l, "buildguard: cycle 3 ok in ") || !strings.HasSuffix(l, "; output released") {
			t.Errorf("cycle line %q, want cycle 3 ok and released", l)
		}
		matchSequence(t, agent, "started,task,ok,"+rejectedStarts+",started,task,ok")
		r.cmd.Process.Signal(syscall.SIGINT)
		if code := r.waitExit(t, time.Minute); code != 130 {
			t.Errorf("exit %d after SIGINT, want 130\nstderr:\n%s", code, r.stderr)
		}
		mustContain(t, "stderr", r.stderr.String(), "after 3 cycles; no output is held")
	})

	// With a buildSrc, which Gradle 4.4.1 builds before the configuration
	// and without init scripts, a refused cycle fails before buildSrc is
	// built, and Gradle 4.4.1 ends the continuous build (no task of the
	// cycle declared inputs to watch).
	t.Run("refused start with buildSrc", func(t *testing.T) {
		dir := project(t, "refused buildSrc")
		writeFiles(t, dir, map[string]string{
			"buildSrc/build.gradle":           "compileJava.doFirst { new File(rootDir.parentFile, 'buildsrc.log') << 'compiled\\n' }\n",
			"buildSrc/src/main/java/q/B.java": "package q;\npublic class B {}\n",
		})
		agent := fakeagent.NewServer(t)
		r := startContinuous(t, exe, dir, home, agent)
		r.cycle(t, 1)
		agent.SetHold("other-owner")
		writeFiles(t, dir, map[string]string{"buildSrc/src/main/java/q/B.java": "package q;\npublic class B { int z; }\n"})
		r.writeSource(t, "int y;")
		if code := r.waitExit(t, 3*time.Minute); code != 1 {
			t.Errorf("exit %d after the refused cycle, want Gradle's 1\nstderr:\n%s", code, r.stderr)
		}
		errText := r.stderr.String()
		mustContain(t, "stderr", errText, "buildguard: cycle 2 refused after ")
		mustContain(t, "Gradle's output", r.stdout.String()+errText, "Exiting continuous build as no executed tasks declared file system inputs.")
		matchSequence(t, agent, "started,task,ok,"+rejectedStarts)
		if got := fileLines(t, filepath.Join(dir, "buildsrc.log")); got != 1 {
			t.Errorf("buildSrc compiled %d times, want once (not in the refused cycle)", got)
		}
	})
}

// fileLines is the number of lines in the file at path, 0 when it does not
// exist.
func fileLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// gradleClientGroup returns the process group of buildguard's child (the
// Gradle client), which is its own group (docs/decisions.md#D12).
func gradleClientGroup(t *testing.T, wrapper int) int {
	t.Helper()
	// Any of buildguard's threads may have started it.
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(wrapper) + "/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var f []string
	for _, path := range tasks {
		if kids, err := os.ReadFile(path); err == nil {
			f = append(f, strings.Fields(string(kids))...)
		}
	}
	if len(f) != 1 {
		t.Fatalf("buildguard has children %v, want one", f)
	}
	child, _ := strconv.Atoi(f[0])
	pgid, err := syscall.Getpgid(child)
	if err != nil {
		t.Fatal(err)
	}
	if pgid == syscall.Getpgrp() {
		t.Fatalf("the Gradle client (pid %d) is in the test's process group", child)
	}
	return pgid
}
