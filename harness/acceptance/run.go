//go:build unix

package acceptance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
)

// machine is what every lane's evidence records about the run's tools.
type machine struct {
	jdk        string
	os         OSInfo
	bgVersion  string
	bgSHA      string
	agentSHA   string
	initSHA    string
	shimSHA    string
	mavenFiles int
}

// Run proves build safety for the selected lanes: it refuses an existing
// work dir, checks (and where allowed installs) the prerequisites, then for
// each lane generates the project, starts the live application and runs the
// seven scenarios. Each lane that passes gets an evidence.json in its
// project root and a PASS line on c.Out. The returned Evidence lists the
// lanes that passed; the error joins every lane's failure (a
// *ScenarioError names the scenario, the check and the log).
func Run(ctx context.Context, c Config) (*Evidence, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(c.WorkDir); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrWorkDirExists, c.WorkDir)
	}
	if err := os.MkdirAll(filepath.Dir(c.WorkDir), 0o755); err != nil {
		return nil, fmt.Errorf("creating the work dir's parent: %w", err)
	}
	if err := os.Mkdir(c.WorkDir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%w: %s", ErrWorkDirExists, c.WorkDir)
		}
		return nil, fmt.Errorf("creating the work dir: %w", err)
	}
	fmt.Fprintf(c.Out, "acceptance: work dir %s\n", c.WorkDir)
	ev := &Evidence{WorkDir: c.WorkDir}

	if err := preflight(ctx, c, c.Out); err != nil {
		return ev, err
	}
	t := tools{
		gradle:     c.Gradle,
		maven:      c.Maven,
		javac:      c.Javac,
		buildguard: c.Buildguard,
		initScript: filepath.Join(c.RepoDir, "integrations", "gradle", "buildguard.init.gradle"),
		mvnShim:    filepath.Join(c.RepoDir, "integrations", "bin", "buildguard-mvn"),
		mavenRepo:  filepath.Join(c.WorkDir, "maven-repository"),
	}
	m, err := prepare(ctx, &c, t)
	if err != nil {
		return ev, err
	}

	var failures []error
	for _, lane := range c.Lanes {
		if ctx.Err() != nil {
			failures = append(failures, fmt.Errorf("%s lane not run: %w", lane, ctx.Err()))
			continue
		}
		fmt.Fprintf(c.Out, "%s: project %s\n", lane, filepath.Join(c.WorkDir, projectDirName(lane)))
		le, err := runLane(ctx, c, t, lane)
		if err != nil {
			fmt.Fprintln(c.Out, err)
			failures = append(failures, err)
			continue
		}
		if err := fillEvidence(ctx, c, t, m, le); err != nil {
			failures = append(failures, fmt.Errorf("%s: recording evidence: %w", lane, err))
			continue
		}
		path, err := writeEvidence(le.ProjectDir, le)
		if err != nil {
			failures = append(failures, fmt.Errorf("%s: %w", lane, err))
			continue
		}
		ev.Lanes = append(ev.Lanes, le)
		fmt.Fprintf(c.Out, "PASS %s: %d scenarios (%s), real two-module compiler and live agent (%.1f s); evidence %s\n",
			lane, len(le.Scenarios), PassSummary(lane), float64(le.WallMs)/1000, path)
	}
	return ev, errors.Join(failures...)
}

// prepare checks the artifacts under test, builds or finds the agent jar,
// mirrors the Maven repository and records the machine.
func prepare(ctx context.Context, c *Config, t tools) (machine, error) {
	var m machine
	need := []struct{ what, path string }{{"the buildguard binary", c.Buildguard}}
	if c.has(LaneGradle) {
		need = append(need, struct{ what, path string }{"the Gradle init script", t.initScript})
	}
	if c.has(LaneMaven) {
		need = append(need, struct{ what, path string }{"the Maven shim", t.mvnShim})
	}
	for _, n := range need {
		if st, err := os.Stat(n.path); err != nil || !st.Mode().IsRegular() {
			return m, fmt.Errorf("%w: %s at %s", ErrPrerequisite, n.what, n.path)
		}
	}
	if c.AgentJar == "" {
		if c.BuildAgent == nil {
			return m, fmt.Errorf("%w: set BUILDGUARD_AGENT_JAR or build the reference agent (harness/refagent)", ErrNoAgent)
		}
		jar, err := c.BuildAgent(ctx, filepath.Join(c.WorkDir, "agent"))
		if err != nil {
			return m, fmt.Errorf("building the reference agent: %w", err)
		}
		c.AgentJar = jar
		fmt.Fprintf(c.Out, "acceptance: built the reference agent %s\n", jar)
	} else {
		fmt.Fprintf(c.Out, "acceptance: agent jar %s\n", c.AgentJar)
	}
	var err error
	if m.agentSHA, err = agentproto.FileSHA256(c.AgentJar); err != nil {
		return m, fmt.Errorf("%w: the agent jar: %v", ErrPrerequisite, err)
	}
	if m.bgSHA, err = agentproto.FileSHA256(c.Buildguard); err != nil {
		return m, err
	}
	if c.has(LaneGradle) {
		if m.initSHA, err = agentproto.FileSHA256(t.initScript); err != nil {
			return m, err
		}
	}
	if c.has(LaneMaven) {
		if m.shimSHA, err = agentproto.FileSHA256(t.mvnShim); err != nil {
			return m, err
		}
		if m.mavenFiles, err = mirrorRepository(c.MavenRepoSource, t.mavenRepo); err != nil {
			return m, err
		}
		if err := checkMirror(t.mavenRepo); err != nil {
			return m, fmt.Errorf("checking the Maven mirror: %w", err)
		}
		fmt.Fprintf(c.Out, "acceptance: mirrored %d files of %s into %s\n", m.mavenFiles, c.MavenRepoSource, t.mavenRepo)
		if err := proveMavenRepository(ctx, t.maven, t.mavenRepo, filepath.Join(c.WorkDir, "maven-probe")); err != nil {
			return m, err
		}
		fmt.Fprintf(c.Out, "acceptance: the offline Maven repository compiles a two-module probe\n")
	}
	v, err := output(ctx, c.Buildguard, "version")
	if err != nil {
		return m, fmt.Errorf("%w: %s version: %v", ErrPrerequisite, c.Buildguard, err)
	}
	m.bgVersion = strings.TrimSpace(v)
	if v, err = output(ctx, c.Java, "-version"); err != nil {
		return m, err
	}
	m.jdk = strings.TrimSpace(v)
	m.os = osInfo(ctx)
	return m, nil
}

// fillEvidence adds the versions and artifact hashes to a passed lane.
func fillEvidence(ctx context.Context, c Config, t tools, m machine, le *LaneEvidence) error {
	var argv []string
	artifacts := []Artifact{
		{Name: "buildguard", Path: c.Buildguard, SHA256: m.bgSHA},
		{Name: "agent", Path: c.AgentJar, SHA256: m.agentSHA},
	}
	switch Lane(le.Tool) {
	case LaneGradle:
		argv = []string{c.Gradle, "--version"}
		artifacts = append(artifacts, Artifact{Name: "gradle-init-script", Path: t.initScript, SHA256: m.initSHA})
	case LaneMaven:
		argv = []string{c.Maven, "-Dstyle.color=never", "--version"}
		artifacts = append(artifacts, Artifact{Name: "maven-shim", Path: t.mvnShim, SHA256: m.shimSHA})
	}
	v, err := output(ctx, argv...)
	if err != nil {
		return err
	}
	le.ToolVersion = strings.TrimSpace(stripANSI(v))
	le.JDK = m.jdk
	le.OS = m.os
	le.BuildguardVersion = m.bgVersion
	le.Artifacts = artifacts
	return nil
}

// ansiRE matches terminal colour sequences (Maven prints them even in batch
// mode for --version).
var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// osInfo reads uname and /etc/os-release's PRETTY_NAME; what it cannot read
// stays empty.
func osInfo(ctx context.Context) OSInfo {
	var o OSInfo
	if u, err := output(ctx, "uname", "-srvm"); err == nil {
		o.Uname = strings.TrimSpace(u)
	}
	o.PrettyName = prettyName("/etc/os-release")
	return o
}

// prettyName returns PRETTY_NAME of an os-release file, unquoted.
func prettyName(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
