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
	"strconv"
	"time"
)

// compileTimeout bounds the lane's own javac run.
const compileTimeout = 2 * time.Minute

// BuildFailing is the project's build that fails with real javac errors.
const BuildFailing = "broken"

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

// writeProject writes dir's Broken.java and a .buildguard.json whose build
// BuildFailing compiles it into classes/, compiles it once with the same
// command, and returns javac's first error.
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
	command := []string{javac, "--release", "17", "-encoding", "UTF-8", "-implicit:none", "-cp", classes, "-d", classes, broken}
	cfg, err := json.MarshalIndent(map[string]any{"builds": map[string]any{BuildFailing: map[string]any{"command": command}},
		"defaultBuild": BuildFailing}, "", "  ")
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
