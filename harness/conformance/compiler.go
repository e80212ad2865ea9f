package conformance

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// compilerSource is a javac server: it reads "<outDir>\t<source>" lines and
// compiles each with the JDK's javac (javax.tools, the same compiler the
// javac command runs) with --release 17, answering "OK" or "ERR" followed by
// the diagnostics on one line. One warm JVM compiles a changed class in a
// fraction of the time a fresh javac process needs on a loaded machine.
const compilerSource = `import java.io.*;
import java.nio.charset.StandardCharsets;
import javax.tools.*;

public class Javac {
    public static void main(String[] args) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t");
            ByteArrayOutputStream diag = new ByteArrayOutputStream();
            String[] cmd = new String[parts.length + 3];
            cmd[0] = "--release"; cmd[1] = "17"; cmd[2] = "-nowarn";
            System.arraycopy(parts, 0, cmd, 3, parts.length);
            int rc = javac.run(null, diag, diag, cmd);
            String text = diag.toString(StandardCharsets.UTF_8).replace('\n', ' ').replace('\r', ' ');
            out.println((rc == 0 ? "OK " : "ERR ") + text);
        }
    }
}
`

// compiler is a running javac server.
type compiler struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	done chan struct{}
}

// startCompiler starts the javac server (java's source-file mode) in dir; it
// is stopped in t.Cleanup.
func startCompiler(t testing.TB, dir string) *compiler {
	t.Helper()
	java := requireTool(t, "java")
	requireTool(t, "javac")
	src := filepath.Join(dir, "Javac.java")
	if err := os.WriteFile(src, []byte(compilerSource), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", src)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the javac server: %v", err)
	}
	c := &compiler{cmd: cmd, in: in, out: bufio.NewReader(out), done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// compile runs javac with args (after --release 17 -nowarn); none may hold
// a tab or a newline.
func (c *compiler) compile(t testing.TB, args ...string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range args {
		if strings.ContainsAny(a, "\t\n\r") {
			t.Fatalf("javac argument %q holds a tab or newline", a)
		}
	}
	if _, err := fmt.Fprintln(c.in, strings.Join(args, "\t")); err != nil {
		t.Fatalf("javac server: %v", err)
	}
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := c.out.ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("javac server ended: %v", r.err)
		}
		if !strings.HasPrefix(r.line, "OK ") {
			t.Fatalf("javac %s: %s", strings.Join(args, " "), strings.TrimSpace(r.line))
		}
	case <-time.After(2 * time.Minute):
		c.cmd.Process.Kill()
		t.Fatalf("javac %s: no answer within 2 minutes", strings.Join(args, " "))
	}
}
