//go:build unix

package clients

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProjectDirName is the consumer project's directory name below a lane's work
// directory; the space is deliberate.
const ProjectDirName = "consumer project with spaces"

// compileTimeout bounds one javac run.
const compileTimeout = 120 * time.Second

// ErrCompile means javac failed where the scenario expected it to succeed.
var ErrCompile = errors.New("javac failed")

// Project is the consumer application on disk: sources in src/, classes in
// classes/ (the agent's watched directory).
type Project struct {
	// Root is the absolute project directory.
	Root string
	// Src holds Service.java, App.java and, while a scenario needs it, Broken.java.
	Src string
	// Classes is the javac output directory and the agent's only watched directory.
	Classes string
	// Javac is the javac executable.
	Javac string
}

// The consumer app's Java sources, shared with the TypeScript lane
// (harness/clients/app): App answers every stdin line with
// PROBE <pid> <nonce> <counter> <value>; Service counts calls in an instance
// field, which survives a method-body redefinition; Broken does not compile
// (the real compiler error of failed-build-hold).
var (
	//go:embed app/App.java
	appSource string
	//go:embed app/Broken.java
	brokenSource string
	//go:embed app/Service.java.template
	serviceTemplate string
)

// serviceSource is Service.java returning value.
func serviceSource(value int) string {
	return strings.Replace(serviceTemplate, "VALUE", strconv.Itoa(value), 1)
}

// NewProject writes Service (value 1) and App into dir/ProjectDirName and
// compiles both into classes/.
func NewProject(ctx context.Context, dir string) (*Project, error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return nil, fmt.Errorf("finding javac: %w (install a JDK 17: apt-get install -y openjdk-17-jdk-headless)", err)
	}
	root, err := filepath.Abs(filepath.Join(dir, ProjectDirName))
	if err != nil {
		return nil, fmt.Errorf("resolving project directory: %w", err)
	}
	p := &Project{Root: root, Src: filepath.Join(root, "src"), Classes: filepath.Join(root, "classes"), Javac: javac}
	for _, d := range []string{p.Src, p.Classes} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("creating project: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(p.Src, "App.java"), []byte(appSource), 0o644); err != nil {
		return nil, fmt.Errorf("writing App.java: %w", err)
	}
	if err := p.WriteService(1); err != nil {
		return nil, err
	}
	if out, err := p.javac(ctx, "Service.java", "App.java"); err != nil {
		return nil, fmt.Errorf("%w: compiling the app: %s", ErrCompile, out)
	}
	return p, nil
}

// WriteService rewrites Service.java to return value.
func (p *Project) WriteService(value int) error {
	if err := os.WriteFile(filepath.Join(p.Src, "Service.java"), []byte(serviceSource(value)), 0o644); err != nil {
		return fmt.Errorf("writing Service.java: %w", err)
	}
	return nil
}

// WriteBroken adds Broken.java, which references an undefined symbol.
func (p *Project) WriteBroken() error {
	if err := os.WriteFile(filepath.Join(p.Src, "Broken.java"), []byte(brokenSource), 0o644); err != nil {
		return fmt.Errorf("writing Broken.java: %w", err)
	}
	return nil
}

// RemoveBroken deletes Broken.java.
func (p *Project) RemoveBroken() error {
	if err := os.Remove(filepath.Join(p.Src, "Broken.java")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing Broken.java: %w", err)
	}
	return nil
}

// CompileService recompiles Service.java into classes/ and returns the
// SHA-256 of the new Service.class.
func (p *Project) CompileService(ctx context.Context) (string, error) {
	if out, err := p.javac(ctx, "Service.java"); err != nil {
		return "", fmt.Errorf("%w: compiling Service.java: %s", ErrCompile, out)
	}
	return p.ClassSHA("Service")
}

// CompileBroken compiles Broken.java and returns javac's output; it is an
// error when javac succeeds or when its output lacks the missing symbol.
func (p *Project) CompileBroken(ctx context.Context) (string, error) {
	out, err := p.javac(ctx, "Broken.java")
	if err == nil {
		return out, errors.New("compiling Broken.java succeeded, but it must fail with a real compiler error")
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if !strings.Contains(out, "missingSymbol") {
		return out, fmt.Errorf("javac failed without naming missingSymbol: %s", out)
	}
	return out, nil
}

// ClassSHA returns the lower-case hex SHA-256 of classes/<name>.class.
func (p *Project) ClassSHA(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(p.Classes, name+".class"))
	if err != nil {
		return "", fmt.Errorf("hashing %s.class: %w", name, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// javacArgs are javac's arguments for the named sources (relative to src/,
// or absolute) into classes/.
func (p *Project) javacArgs(files ...string) []string {
	return append([]string{"--release", "17", "-encoding", "UTF-8", "-implicit:none", "-sourcepath", "", "-cp", p.Classes, "-d", p.Classes}, files...)
}

// javac compiles the named sources (relative to src/) into classes/.
func (p *Project) javac(ctx context.Context, files ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, compileTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Javac, p.javacArgs(files...)...)
	cmd.Dir = p.Src
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}
