package acceptance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Lane is one build tool the proof runs against.
type Lane string

// The lanes, in the order a full run takes them.
const (
	LaneGradle Lane = "gradle"
	LaneMaven  Lane = "maven"
)

// AllLanes is the default selection: Gradle, then Maven.
var AllLanes = []Lane{LaneGradle, LaneMaven}

// ParseLanes turns a selection such as "gradle", "maven", "gradle,maven",
// "all" or "" (all) into lanes.
func ParseLanes(s string) ([]Lane, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" || s == "both" {
		return append([]Lane(nil), AllLanes...), nil
	}
	var lanes []Lane
	for _, part := range strings.Split(s, ",") {
		switch l := Lane(strings.TrimSpace(part)); l {
		case LaneGradle, LaneMaven:
			lanes = append(lanes, l)
		default:
			return nil, fmt.Errorf("%w: %q (use gradle, maven or all)", ErrUnknownLane, part)
		}
	}
	return lanes, nil
}

// AgentBuilder compiles an agent jar into outDir and returns its path
// (harness/refagent.Build has this shape).
type AgentBuilder func(ctx context.Context, outDir string) (jarPath string, err error)

// Config selects what Run proves and with which tools.
type Config struct {
	// Lanes to run, in order. Empty means AllLanes.
	Lanes []Lane

	// WorkDir receives every fixture, log and evidence file. It must not
	// exist yet. Empty means <RepoDir>/work/acceptance-<UTC timestamp>.
	WorkDir string

	// RepoDir is the buildguard checkout that holds
	// integrations/gradle/buildguard.init.gradle and
	// integrations/bin/buildguard-mvn. Empty means the working directory.
	RepoDir string

	// Buildguard is the path of the buildguard binary under test. Required.
	Buildguard string

	// AgentJar is the -javaagent jar of the live application. Empty means the
	// environment variable BUILDGUARD_AGENT_JAR, and when that is empty too,
	// the jar BuildAgent builds into <WorkDir>/agent.
	AgentJar string

	// BuildAgent builds the default agent jar. Nil means no default: an
	// empty AgentJar and BUILDGUARD_AGENT_JAR is then a failure.
	BuildAgent AgentBuilder

	// Java, Javac, Gradle and Maven are the executables. Empty means "java",
	// "javac", "gradle" and "mvn" looked up on PATH.
	Java, Javac, Gradle, Maven string

	// MavenRepoSource is the Maven repository mirrored, file by file, into
	// <WorkDir>/maven-repository. Empty means /usr/share/maven-repo
	// (Debian's packaged plugins).
	MavenRepoSource string

	// NoInstall forbids preflight to install missing packages. The zero
	// value lets preflight run apt-get when it runs as root and apt-get
	// exists; otherwise a missing prerequisite fails naming the command.
	NoInstall bool

	// Out receives progress lines, the work dir and the PASS lines. Nil
	// means os.Stdout.
	Out io.Writer

	// Now is the clock that names the default work dir.
	// Nil means time.Now.
	Now func() time.Time
}

// Sentinel errors of Run; match them with errors.Is.
var (
	// ErrUnknownLane: a lane name other than gradle or maven.
	ErrUnknownLane = errors.New("unknown lane")
	// ErrWorkDirExists: the work dir already exists; a fresh one keeps the
	// evidence of earlier runs intact.
	ErrWorkDirExists = errors.New("work dir exists; use a fresh work dir to preserve earlier evidence")
	// ErrPrerequisite: a tool or package the proof needs is missing. It is a
	// failure, never a skipped success.
	ErrPrerequisite = errors.New("missing prerequisite")
	// ErrScenario: a scenario's check failed; the error names the lane, the
	// scenario, the check and the log to read.
	ErrScenario = errors.New("scenario failed")
	// ErrNoAgent: no agent jar is configured and none can be built.
	ErrNoAgent = errors.New("no agent jar")
)

// withDefaults returns c with every zero field filled in.
func (c Config) withDefaults() (Config, error) {
	if len(c.Lanes) == 0 {
		c.Lanes = append([]Lane(nil), AllLanes...)
	}
	for _, l := range c.Lanes {
		if l != LaneGradle && l != LaneMaven {
			return c, fmt.Errorf("%w: %q (use gradle, maven or all)", ErrUnknownLane, l)
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.RepoDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return c, fmt.Errorf("finding the repository: %w", err)
		}
		c.RepoDir = wd
	}
	repo, err := filepath.Abs(c.RepoDir)
	if err != nil {
		return c, fmt.Errorf("resolving the repository dir: %w", err)
	}
	c.RepoDir = repo
	if c.WorkDir == "" {
		c.WorkDir = filepath.Join(c.RepoDir, "work", "acceptance-"+c.Now().UTC().Format("20060102T150405Z"))
	}
	if c.WorkDir, err = filepath.Abs(c.WorkDir); err != nil {
		return c, fmt.Errorf("resolving the work dir: %w", err)
	}
	if c.Buildguard == "" {
		return c, fmt.Errorf("%w: the buildguard binary (build it with `go build -o bin/buildguard ./cmd/buildguard`)", ErrPrerequisite)
	}
	if c.Buildguard, err = filepath.Abs(c.Buildguard); err != nil {
		return c, fmt.Errorf("resolving the buildguard binary: %w", err)
	}
	if c.AgentJar == "" {
		c.AgentJar = os.Getenv("BUILDGUARD_AGENT_JAR")
	}
	if c.AgentJar != "" {
		if c.AgentJar, err = filepath.Abs(c.AgentJar); err != nil {
			return c, fmt.Errorf("resolving the agent jar: %w", err)
		}
	}
	for _, p := range []struct {
		f   *string
		def string
	}{{&c.Java, "java"}, {&c.Javac, "javac"}, {&c.Gradle, "gradle"}, {&c.Maven, "mvn"}} {
		if *p.f == "" {
			*p.f = p.def
		}
	}
	if c.MavenRepoSource == "" {
		c.MavenRepoSource = "/usr/share/maven-repo"
	}
	return c, nil
}

// has reports whether the lane l is selected.
func (c Config) has(l Lane) bool {
	for _, x := range c.Lanes {
		if x == l {
			return true
		}
	}
	return false
}
