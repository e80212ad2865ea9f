//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/magefile/mage/sh"

	"github.com/buildguard/buildguard/harness/acceptance"
	"github.com/buildguard/buildguard/harness/refagent"
	"github.com/buildguard/buildguard/harness/release"
)

// Acceptance proves build safety: seven scenarios per lane, then the one-call build, against a live JVM (LANE=gradle|maven|all, WORK_DIR, BUILDGUARD_AGENT_JAR).
//
// Environment:
//
//	LANE                  gradle, maven or all (default all: Gradle, then Maven)
//	WORK_DIR              a fresh directory for the run (default work/acceptance-<UTC time>)
//	BUILDGUARD_AGENT_JAR  an agent jar to attach instead of the reference agent
//	BUILDGUARD_NO_INSTALL set to 1 to forbid installing missing packages with apt-get
//	VERSION               the version linked into bin/buildguard (default: git describe)
func Acceptance(ctx context.Context) error {
	return acceptanceRun(ctx, os.Getenv("LANE"))
}

// AcceptanceLane runs the proof for one lane: `go tool mage acceptanceLane gradle` (or maven, all).
func AcceptanceLane(ctx context.Context, lane string) error {
	return acceptanceRun(ctx, lane)
}

// acceptanceRun builds bin/buildguard and runs harness/acceptance for the
// lanes named by sel.
func acceptanceRun(ctx context.Context, sel string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	lanes, err := acceptance.ParseLanes(sel)
	if err != nil {
		return err
	}
	bin, err := buildBuildguard(ctx)
	if err != nil {
		return err
	}
	_, err = acceptance.Run(ctx, acceptance.Config{
		Lanes:      lanes,
		WorkDir:    os.Getenv("WORK_DIR"),
		Buildguard: bin,
		BuildAgent: refagent.Build,
		NoInstall:  os.Getenv("BUILDGUARD_NO_INSTALL") == "1",
	})
	return err
}

// buildBuildguard builds bin/buildguard as it ships (static, without cgo)
// and returns its absolute path. It carries the release version (VERSION, or
// what git describes), so the evidence names what was proven.
func buildBuildguard(ctx context.Context) (string, error) {
	bin, err := filepath.Abs(filepath.Join("bin", "buildguard"))
	if err != nil {
		return "", err
	}
	v := os.Getenv("VERSION")
	if v == "" {
		v = release.DescribeVersion(ctx, ".")
	}
	if err := sh.RunWithV(map[string]string{"CGO_ENABLED": "0"}, "go", "build", "-ldflags", "-X "+release.VersionVar+"="+v, "-o", bin, "./cmd/buildguard"); err != nil {
		return "", fmt.Errorf("building buildguard: %w", err)
	}
	return bin, nil
}
