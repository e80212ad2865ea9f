//go:build unix

package clients

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// hostProbeTimeout bounds each version query (java -version, node --version, uname).
const hostProbeTimeout = 20 * time.Second

// HostMetadata describes the machine a run happened on: OS, kernel,
// architecture, Go, JDK (the text of java -version) and the java/javac
// paths. Unknown values are "unknown", never omitted.
func HostMetadata(ctx context.Context) map[string]any {
	m := map[string]any{
		"platform": runtime.GOOS,
		"arch":     runtime.GOARCH,
		"go":       runtime.Version(),
		"os":       osRelease(),
		"kernel":   commandText(ctx, "uname", "-sr"),
		"jdk":      commandText(ctx, "java", "-version"),
		"java":     lookPath("java"),
		"javac":    lookPath("javac"),
	}
	return m
}

// NodeVersion is `node --version`, or "unknown".
func NodeVersion(ctx context.Context) string { return commandText(ctx, "node", "--version") }

func lookPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return "unknown"
	}
	return p
}

// commandText runs a version query and returns its combined output, trimmed.
func commandText(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, hostProbeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// osRelease is PRETTY_NAME from /etc/os-release, or "unknown".
func osRelease() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "unknown"
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "unknown"
}
