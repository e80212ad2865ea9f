//go:build mage

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/buildguard/buildguard/harness/hostlanes"
)

// Hosts runs the host lanes: each MCP host's own CLI (pinned npm versions) against buildguard and a scripted model on loopback, and regenerates docs/host-matrix.md.
//
// Environment:
//
//	HOST_LANES  comma-separated host names to run (default: all; names: claude, codex, gemini);
//	            docs/host-matrix.md is regenerated only by a full run
//	HOST_SCENARIOS  comma-separated scenarios to run (default: all; names:
//	            failing-build, passing-build, long-build, queued-build); only a
//	            full run regenerates docs/host-matrix.md
//	HOSTS_NPM   the npm cache folder of the lanes (default work/hosts-npm)
//	WORK_DIR    a fresh directory for the run (default work/hosts-<UTC time>)
//
// It fails when npm or its registry is not reachable (saying so), when a
// pinned version is not in the registry, and when a host's model missed
// what it must see (docs/host-matrix.md#2).
func Hosts(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	bin, err := buildBuildguard(ctx)
	if err != nil {
		return err
	}
	work := os.Getenv("WORK_DIR")
	if work == "" {
		work = filepath.Join("work", "hosts-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	cache := os.Getenv("HOSTS_NPM")
	if cache == "" {
		cache = filepath.Join("work", "hosts-npm")
	}
	only, scenarios := names(os.Getenv("HOST_LANES")), names(os.Getenv("HOST_SCENARIOS"))
	var recs []*hostlanes.Record
	var errs error
	for _, h := range hostlanes.Hosts {
		if only != nil && !only[h.Name] {
			continue
		}
		hrecs, err := hostLanes(ctx, h, bin, cache, filepath.Join(work, h.Name), scenarios)
		if errors.Is(err, hostlanes.ErrNoNPM) {
			return err
		}
		recs = append(recs, hrecs...)
		errs = errors.Join(errs, err)
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; docs/host-matrix.md left as is: %w", errors.Join(errs, ctx.Err()))
		}
	}
	if only != nil || scenarios != nil {
		fmt.Printf("hosts: records in %s; docs/host-matrix.md left as is (partial run)\n", work)
		return errs
	}
	if err := hostlanes.WriteMatrixDoc(filepath.Join("docs", "host-matrix.md"), work, recs); err != nil {
		return errors.Join(errs, err)
	}
	fmt.Printf("hosts: records in %s; docs/host-matrix.md regenerated\n", work)
	return errs
}

// hostLanes installs h and runs its lanes, one per scenario, in
// dir/SCENARIO, printing each outcome.
func hostLanes(ctx context.Context, h hostlanes.Host, bin, cache, dir string, scenarios map[string]bool) ([]*hostlanes.Record, error) {
	if _, err := hostlanes.CheckRegistry(ctx, h.Package, h.Version); err != nil {
		return nil, err
	}
	fmt.Printf("hosts: installing %s@%s into %s\n", h.Package, h.Version, cache)
	hostBin, err := hostlanes.Install(ctx, cache, h)
	if err != nil {
		return nil, err
	}
	var recs []*hostlanes.Record
	var errs error
	for _, sc := range hostlanes.Scenarios {
		if scenarios != nil && !scenarios[sc.Name] {
			continue
		}
		lane, err := filepath.Abs(filepath.Join(dir, sc.Name))
		if err == nil {
			err = os.MkdirAll(lane, 0o755)
		}
		if err != nil {
			return recs, errors.Join(errs, err)
		}
		start := time.Now()
		rec, err := hostlanes.RunLane(ctx, hostlanes.LaneConfig{WorkDir: lane, Buildguard: bin, HostBin: hostBin, Host: h, Scenario: sc})
		result := "PASS"
		if err != nil {
			result = "FAIL: " + err.Error()
		}
		fmt.Printf("hosts: %s %s: %s (%.1f s)\n", h.Name, sc.Name, result, time.Since(start).Seconds())
		recs, errs = append(recs, rec), errors.Join(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return recs, errs
}

// HostsDoc regenerates docs/host-matrix.md from the record.json files of a finished run (WORK_DIR, default: the newest work/hosts-2*).
func HostsDoc() error {
	work := os.Getenv("WORK_DIR")
	if work == "" {
		runs, _ := filepath.Glob(filepath.Join("work", "hosts-2*"))
		if len(runs) == 0 {
			return errors.New("no work/hosts-* run found: run go tool mage hosts, or set WORK_DIR")
		}
		sort.Strings(runs)
		work = runs[len(runs)-1]
	}
	recs, err := hostlanes.LoadRecords(work)
	if err != nil {
		return err
	}
	return hostlanes.WriteMatrixDoc(filepath.Join("docs", "host-matrix.md"), work, recs)
}

// names is the set of a comma-separated list; nil for "".
func names(list string) map[string]bool {
	if list == "" {
		return nil
	}
	set := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		set[strings.TrimSpace(n)] = true
	}
	return set
}
