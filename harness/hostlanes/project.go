//go:build unix

package hostlanes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// compileTimeout bounds the lane's own javac run.
const compileTimeout = 2 * time.Minute

// The project's builds in its .buildguard.json.
const (
	// BuildFailing fails with real javac errors.
	BuildFailing = "broken"
	// BuildPassing compiles Service.java, changed since classes/ was
	// compiled, so Service.class changes.
	BuildPassing = "compile"
	// BuildLong prints a line a second for SlowSteps seconds, then compiles
	// like BuildPassing and writes SlowDone.
	BuildLong = "slow"
	// SlowSteps is how many seconds BuildLong takes before it compiles.
	SlowSteps = 8
	// SlowDone is the file BuildLong writes in the project when it has
	// compiled.
	SlowDone = "slow.done"
)

// serviceSource is Service.java returning value.
func serviceSource(value int) string {
	return "public class Service {\n    public int value() {\n        return " + strconv.Itoa(value) + ";\n    }\n}\n"
}

// brokenSource does not compile: an undefined symbol on line 3, then an
// int returned as a String on line 6.
const brokenSource = `public class Broken {
    int value() {
        return missingSymbol;
    }
    String name() {
        return 42;
    }
}
`

// javacError is javac's "FILE:LINE: error: MESSAGE" line.
var javacError = regexp.MustCompile(`(?m)^(.*\.java):(\d+): error: (.*)$`)

// Diagnostic is one compiler error as javac printed it.
type Diagnostic struct {
	File    string `json:"file"` // base name
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Location is File:Line.
func (d Diagnostic) Location() string { return d.File + ":" + strconv.Itoa(d.Line) }

// writeProject writes dir's Broken.java, Service.java (compiled into
// classes/ returning 1, then changed to return 2) and a .buildguard.json
// whose builds compile them into classes/, compiles Broken.java once with
// the same command, and returns javac's first error.
func writeProject(ctx context.Context, dir string) (Diagnostic, error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return Diagnostic{}, fmt.Errorf("finding javac: %w (install a JDK 17)", err)
	}
	src, classes := filepath.Join(dir, "src"), filepath.Join(dir, "classes")
	for _, d := range []string{src, classes} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Diagnostic{}, err
		}
	}
	broken := filepath.Join(src, "Broken.java")
	if err := os.WriteFile(broken, []byte(brokenSource), 0o644); err != nil {
		return Diagnostic{}, err
	}
	javacArgs := []string{javac, "--release", "17", "-encoding", "UTF-8", "-implicit:none", "-cp", classes, "-d", classes}
	command := append(slices.Clone(javacArgs), broken)
	service := filepath.Join(src, "Service.java")
	compile := append(slices.Clone(javacArgs), service)
	for _, v := range []int{1, 2} {
		if err := os.WriteFile(service, []byte(serviceSource(v)), 0o644); err != nil {
			return Diagnostic{}, err
		}
		if v == 2 {
			break
		}
		if out, err := run(ctx, compileTimeout, dir, nil, compile[0], compile[1:]...); err != nil {
			return Diagnostic{}, fmt.Errorf("compiling Service.java: %w: %s", err, out)
		}
	}
	cfg, err := json.MarshalIndent(map[string]any{"builds": map[string]any{
		BuildFailing: map[string]any{"command": command},
		BuildPassing: map[string]any{"command": compile},
		BuildLong: map[string]any{"command": append([]string{"sh", "-c", "i=1; while [ $i -le " + strconv.Itoa(SlowSteps) +
			` ]; do echo "step $i of ` + strconv.Itoa(SlowSteps) + `"; sleep 1; i=$((i+1)); done; "$0" "$@" && echo done > ` + SlowDone}, compile...)},
	}, "defaultBuild": BuildFailing}, "", "  ")
	if err != nil {
		return Diagnostic{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, ".buildguard.json"), cfg, 0o644); err != nil {
		return Diagnostic{}, err
	}
	out, err := run(ctx, compileTimeout, dir, nil, command[0], command[1:]...)
	if err == nil {
		return Diagnostic{}, fmt.Errorf("javac compiled Broken.java, which must fail: %s", out)
	}
	m := javacError.FindStringSubmatch(out)
	if m == nil {
		return Diagnostic{}, fmt.Errorf("javac failed without an error line: %v: %s", err, out)
	}
	line, _ := strconv.Atoi(m[2])
	return Diagnostic{File: filepath.Base(m[1]), Line: line, Message: m[3]}, nil
}
