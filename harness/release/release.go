// Package release cross-compiles the buildguard binary for every supported
// platform into dist/ with a .sha256 sidecar per binary. Each sidecar names
// only its own file, so `sha256sum -c` works after both are moved anywhere.
//
// It owns the artifact names, the build flags (CGO off, trimmed paths,
// version linked into cli.Version) and the sidecars. It does not
// publish anything. Product code never imports this package; the mage
// target `release` drives it.
package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// VersionVar is the linker symbol that carries the version.
const VersionVar = "github.com/buildguard/buildguard/cli.Version"

// Target is one GOOS/GOARCH pair.
type Target struct {
	OS, Arch string
}

func (t Target) String() string { return t.OS + "/" + t.Arch }

// Targets are the platforms a release covers: linux, darwin and windows on
// amd64 and arm64.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Config says what to build.
type Config struct {
	// Version is linked into the binary and named in each file. Empty means
	// "dev". It must match [A-Za-z0-9._+-]+.
	Version string
	// OutDir receives the binaries and sidecars. Empty means "dist".
	OutDir string
	// Targets to build. Empty means Targets.
	Targets []Target
	// Dir is the module root the build runs in. Empty means the working
	// directory.
	Dir string
	// Package is the main package. Empty means "./cmd/buildguard".
	Package string
	// Go is the go command. Empty means "go" on PATH.
	Go string
	// BuildTimeout bounds each target's build. Zero means 5 minutes.
	BuildTimeout time.Duration
}

// Artifact is one built binary and its sidecar.
type Artifact struct {
	Target  Target
	Path    string // dist/buildguard-<version>-<os>-<arch>[.exe]
	Sidecar string // Path + ".sha256"
	SHA256  string // lower-case hex
}

// ErrInvalidVersion: the version cannot be part of a file name or a linker flag.
var ErrInvalidVersion = errors.New("invalid version")

var versionRE = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)

// FileName is the artifact's base name for version v and target t.
func FileName(v string, t Target) string {
	name := "buildguard-" + v + "-" + t.OS + "-" + t.Arch
	if t.OS == "windows" {
		name += ".exe"
	}
	return name
}

// Build compiles every target with CGO_ENABLED=0 and writes its sidecar
// "<sha256>  <file name>". It stops at the first failure.
func Build(ctx context.Context, c Config) ([]Artifact, error) {
	if c.Version == "" {
		c.Version = "dev"
	}
	if !versionRE.MatchString(c.Version) {
		return nil, fmt.Errorf("%w: %q (use letters, digits and . _ + -)", ErrInvalidVersion, c.Version)
	}
	if c.OutDir == "" {
		c.OutDir = "dist"
	}
	if len(c.Targets) == 0 {
		c.Targets = Targets
	}
	if c.Package == "" {
		c.Package = "./cmd/buildguard"
	}
	if c.Go == "" {
		c.Go = "go"
	}
	if c.BuildTimeout == 0 {
		c.BuildTimeout = 5 * time.Minute
	}
	out, err := filepath.Abs(filepath.Join(c.Dir, c.OutDir))
	if filepath.IsAbs(c.OutDir) {
		out = c.OutDir
	}
	if err != nil {
		return nil, fmt.Errorf("resolving the output dir: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", out, err)
	}
	var arts []Artifact
	for _, t := range c.Targets {
		a, err := buildOne(ctx, c, out, t)
		if err != nil {
			return arts, err
		}
		arts = append(arts, a)
	}
	return arts, nil
}

// buildOne builds one target and writes its sidecar.
func buildOne(ctx context.Context, c Config, out string, t Target) (Artifact, error) {
	ctx, cancel := context.WithTimeout(ctx, c.BuildTimeout)
	defer cancel()
	name := FileName(c.Version, t)
	path := filepath.Join(out, name)
	cmd := exec.CommandContext(ctx, c.Go, "build", "-trimpath",
		"-ldflags", "-s -w -X "+VersionVar+"="+c.Version,
		"-o", path, c.Package)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return Artifact{}, fmt.Errorf("building %s for %s: %w\n%s", c.Package, t, err, strings.TrimSpace(string(b)))
	}
	sum, err := agentproto.FileSHA256(path)
	if err != nil {
		return Artifact{}, err
	}
	sidecar := path + ".sha256"
	if err := os.WriteFile(sidecar, []byte(sum+"  "+name+"\n"), 0o644); err != nil {
		return Artifact{}, fmt.Errorf("writing %s: %w", sidecar, err)
	}
	return Artifact{Target: t, Path: path, Sidecar: sidecar, SHA256: sum}, nil
}

// DescribeVersion is `git describe --tags --always --dirty` in dir, or
// "dev" when git cannot tell (no git, no repository).
func DescribeVersion(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty")
	cmd.Dir = dir
	b, err := cmd.Output()
	v := strings.TrimSpace(string(b))
	if err != nil || !versionRE.MatchString(v) {
		return "dev"
	}
	return v
}
