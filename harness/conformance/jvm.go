package conformance

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/jvm"
)

// InstallJDK is the command that installs the JDK the JVM cases need. A
// missing java or javac fails the test with it; the cases are never skipped.
const InstallJDK = jvm.InstallJDK

// JVMConfig describes the live JVM of [StartJVM].
type JVMConfig struct {
	// JavaAgent returns the JVM's -javaagent flag (one argv element) for the
	// class output directories to watch (ClassA's, then ClassB's) and the
	// port file the agent must write. Required.
	JavaAgent func(outDirs []string, portFile string) (flag string, err error)
	// StartTimeout bounds the start: the port file, the first VALUES line
	// and a DOCTOR watcherState "watching". 0 means 60 s.
	StartTimeout time.Duration
}

// jvmAgent is a JVM running App with an agent attached.
type jvmAgent struct {
	port     int
	portFile string
	app      *App
	out      *jvmOutput
	proc     *jvm.Process
}

func (j *jvmAgent) Port() int        { return j.port }
func (j *jvmAgent) PortFile() string { return j.portFile }
func (j *jvmAgent) Output() Output   { return j.out }
func (j *jvmAgent) App() *App        { return j.app }

// Close kills the JVM and waits (bounded) for it to exit.
func (j *jvmAgent) Close() { j.proc.Kill() }

// StartJVM compiles App (printing VALUES=<a>:<b> every 25 ms from ClassA and
// ClassB, both starting at 1) with the JDK's javac into a temporary project
// whose path contains spaces, starts it with the agent attached, and returns once the
// agent's status socket answers, VALUES=1:1 was printed and DOCTOR reports
// the watcher "watching". Its Output edits A.java or B.java and compiles it
// straight into the watched directory, through one long-lived javac (the
// javax.tools compiler in a JVM of its own, far faster than a javac process
// per change). The JVM and the compiler are killed in t.Cleanup. A missing JDK
// fails t with [InstallJDK].
func StartJVM(t *testing.T, cfg JVMConfig) Agent {
	t.Helper()
	if cfg.JavaAgent == nil {
		t.Fatal("conformance.StartJVM: JVMConfig.JavaAgent is required")
	}
	java := requireTool(t, "java")
	start := cfg.StartTimeout
	if start <= 0 {
		start = 60 * time.Second
	}
	root := filepath.Join(t.TempDir(), "conformance app")
	out := &jvmOutput{
		javac:  startCompiler(t, t.TempDir()),
		src:    filepath.Join(root, "src"),
		outDir: map[string]string{ClassA: filepath.Join(root, "a", "classes out"), ClassB: longDir(filepath.Join(root, "b"))},
	}
	appDir := filepath.Join(root, "app classes")
	for _, d := range []string{out.src, out.outDir[ClassA], out.outDir[ClassB], appDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out.Write(t, ClassA, 1)
	out.Write(t, ClassB, 1)
	appJava := filepath.Join(out.src, "App.java")
	if err := os.WriteFile(appJava, []byte(jvm.App), 0o644); err != nil {
		t.Fatal(err)
	}
	out.javac.compile(t, "-cp", out.outDir[ClassA]+string(os.PathListSeparator)+out.outDir[ClassB], "-d", appDir, appJava)

	portFile := filepath.Join(root, "agent port", "agent.port")
	dirs := []string{out.outDir[ClassA], out.outDir[ClassB]}
	agentFlag, err := cfg.JavaAgent(dirs, portFile)
	if err != nil {
		t.Fatalf("building the -javaagent flag: %v", err)
	}
	cp := strings.Join([]string{dirs[0], dirs[1], appDir}, string(os.PathListSeparator))
	proc, err := jvm.Start(jvm.Config{Java: java, Args: []string{"-Xshare:auto", "-XX:TieredStopAtLevel=1", agentFlag, "-cp", cp, "App"}, Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	log := proc.Lines()
	j := &jvmAgent{portFile: portFile, app: &App{log: log, pid: proc.PID(), dir: root, outDirs: dirs}, out: out, proc: proc}
	t.Cleanup(j.Close)

	deadline := time.Now().Add(start)
	for {
		if port, err := (agentproto.Endpoint{PortFile: portFile}).Resolve(); err == nil {
			j.port = port
			break
		}
		select {
		case <-proc.Exited():
			t.Fatalf("the JVM exited before writing its port file %s:\n%s", portFile, log.Tail(30))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no port file %s within %v; JVM output:\n%s", portFile, start, log.Tail(30))
		}
	}
	j.app.waitLine(t, 0, time.Until(deadline), "VALUES=1:1", func(s string) bool { return s == "VALUES=1:1" })
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		conn, err := agentproto.Dial(ctx, j.port)
		var d *agentproto.Doctor
		if err == nil {
			d, err = conn.Doctor(ctx)
			conn.Close()
		}
		cancel()
		if err == nil && d.WatcherState == "watching" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent on port %d is not watching within %v (last DOCTOR %+v, error %v); JVM output:\n%s", j.port, start, d, err, log.Tail(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return j
}

// longDir returns a directory below base whose path is about 215 chars
// long: ClassB's class file path then exceeds the 200 chars a receipt's
// source keeps, while the directory stays within DOCTOR's 256-char sample
// bound.
func longDir(base string) string {
	dir := filepath.Join(base, "classes out")
	for len(dir) < 215 {
		dir = filepath.Join(dir, "nested output")
	}
	return dir
}

// requireTool fails (never skips) when a JDK tool is missing.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := jvm.Tool(name)
	if err != nil {
		t.Fatalf("the JVM conformance cases: %v", err)
	}
	return p
}

// jvmOutput changes ClassA and ClassB by editing their sources and compiling
// them with javac straight into the watched output directories.
type jvmOutput struct {
	javac  *compiler
	src    string
	outDir map[string]string
}

// Write rewrites class.java to return value and compiles it into the class's
// output directory; the SHA-256 is of the class file javac left on disk.
func (o *jvmOutput) Write(t testing.TB, class string, value int) Class {
	t.Helper()
	dir, ok := o.outDir[class]
	if !ok {
		t.Fatalf("the JVM app has no class %q (only %s and %s)", class, ClassA, ClassB)
	}
	src := filepath.Join(o.src, class+".java")
	if err := os.WriteFile(src, []byte(jvm.Class(class, value)), 0o644); err != nil {
		t.Fatal(err)
	}
	o.javac.compile(t, "-d", dir, src)
	path := filepath.Join(dir, class+".class")
	return Class{Name: class, Path: path, SHA256: fileSHA256(t, path)}
}

// fileSHA256 hashes a file as it is on disk now.
func fileSHA256(t testing.TB, path string) string {
	t.Helper()
	sum, err := agentproto.FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// App is the live JVM application: it prints VALUES=<a>:<b> every 25 ms,
// where a and b are what ClassA and ClassB currently return.
type App struct {
	log     *jvm.LineLog
	pid     int
	dir     string
	outDirs []string
}

// OutputDirs are the class output directories of ClassA and ClassB, which
// the agent watches.
func (a *App) OutputDirs() []string { return slices.Clone(a.outDirs) }

// PID is the JVM's process id (DOCTOR pid must name it).
func (a *App) PID() int { return a.pid }

// Dir is the JVM's working directory (DOCTOR workingDirectory must name it).
func (a *App) Dir() string { return a.dir }

// Mark returns the index of the next output line.
func (a *App) Mark() int { return a.log.Mark() }

// WaitValues waits for a VALUES line at or after index from that satisfies
// match and returns its index.
func (a *App) WaitValues(t testing.TB, from int, wait time.Duration, what string, match func(a, b int) bool) int {
	t.Helper()
	return a.waitLine(t, from, wait, what, func(s string) bool {
		x, y, ok := jvm.ParseValues(s)
		return ok && match(x, y)
	})
}

// Values returns the VALUES pairs printed at or after index from, in order.
func (a *App) Values(from int) [][2]int {
	var out [][2]int
	for _, l := range a.log.Since(from) {
		if x, y, ok := jvm.ParseValues(l); ok {
			out = append(out, [2]int{x, y})
		}
	}
	return out
}

func (a *App) waitLine(t testing.TB, from int, wait time.Duration, what string, match func(string) bool) int {
	t.Helper()
	i, err := a.log.WaitFor(from, wait, match)
	if err != nil {
		t.Fatalf("no application line %s: %v; last lines:\n%s", what, err, a.log.Tail(15))
	}
	return i
}
