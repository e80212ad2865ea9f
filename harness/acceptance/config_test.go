package acceptance

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseLanes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]Lane{
		"":             {LaneGradle, LaneMaven},
		"all":          {LaneGradle, LaneMaven},
		"maven":        {LaneMaven},
		" gradle ":     {LaneGradle},
		"maven,gradle": {LaneMaven, LaneGradle},
	} {
		got, err := ParseLanes(in)
		if err != nil {
			t.Errorf("ParseLanes(%q): %v", in, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ParseLanes(%q) (-want +got):\n%s", in, diff)
		}
	}
	if _, err := ParseLanes("ant"); !errors.Is(err, ErrUnknownLane) {
		t.Errorf("ParseLanes(ant) err = %v, want ErrUnknownLane", err)
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Setenv("BUILDGUARD_AGENT_JAR", "")
	repo := t.TempDir()
	c, err := Config{RepoDir: repo, Buildguard: "bin/buildguard", Now: func() time.Time {
		return time.Date(2026, 11, 30, 12, 0, 5, 0, time.UTC)
	}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(repo, "work", "acceptance-20261130T120005Z"); c.WorkDir != want {
		t.Errorf("WorkDir = %q, want %q", c.WorkDir, want)
	}
	if !filepath.IsAbs(c.Buildguard) || c.Java != "java" || c.Maven != "mvn" || c.MavenRepoSource != "/usr/share/maven-repo" {
		t.Errorf("defaults: %+v", c)
	}
	if len(c.Lanes) != 2 || c.AgentJar != "" {
		t.Errorf("lanes %v agent %q", c.Lanes, c.AgentJar)
	}
	if _, err := (Config{RepoDir: repo}).withDefaults(); !errors.Is(err, ErrPrerequisite) || !strings.Contains(err.Error(), "go build") {
		t.Errorf("no buildguard: err = %v", err)
	}
}

func TestConfigAgentJarFromEnv(t *testing.T) {
	t.Setenv("BUILDGUARD_AGENT_JAR", "/opt/reclazz/agent.jar")
	c, err := Config{RepoDir: t.TempDir(), Buildguard: "/b"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.AgentJar != "/opt/reclazz/agent.jar" {
		t.Errorf("AgentJar = %q", c.AgentJar)
	}
}
