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

	"github.com/buildguard/buildguard/harness/clients"
	"github.com/buildguard/buildguard/harness/refagent"
)

// Clients runs the MCP client acceptance matrix (every lane, one live JVM each) and regenerates docs/client-matrix.md.
//
// Environment:
//
//	CLIENT_LANES  comma-separated lane names to run (default: all lanes and the hold witness;
//	              names: go-sdk-2024-11-05, go-sdk-2025-03-26, go-sdk-2025-06-18, go-sdk-2025-11-25, go-sdk-default,
//	              go-sdk-2026-07-28, go-sdk-http-2025-11-25, go-sdk-http-default, tasks-stdio, tasks-http, ts-sdk,
//	              ts-sdk-http, witness);
//	              docs/client-matrix.md is regenerated only by a full run
//	WORK_DIR      a fresh directory for the run (default work/clients-<UTC time>)
//	VERSION       the version linked into bin/buildguard (default: git describe)
//
// Then the hold witness runs (see ClientsWitness). A lane failure names the
// lane, the scenario and the call; every lane still runs and writes its
// evaluation.json.
func Clients(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	bin, jar, work, err := clientsPrepare(ctx, "clients")
	if err != nil {
		return err
	}
	var only map[string]bool
	if s := os.Getenv("CLIENT_LANES"); s != "" {
		only = map[string]bool{}
		for _, n := range strings.Split(s, ",") {
			only[strings.TrimSpace(n)] = true
		}
	}
	res, err := clients.RunMatrix(ctx, clients.MatrixConfig{
		WorkDir:  work,
		Binary:   bin,
		AgentJar: jar,
		Only:     only,
		TSDir:    filepath.Join("harness", "clients", "ts"),
		Log:      os.Stdout,
	})
	if err != nil && !errors.Is(err, clients.ErrLaneFailed) {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; docs/client-matrix.md left as is: %w", errors.Join(err, ctx.Err()))
	}
	if only == nil || only["witness"] {
		fmt.Println("clients: hold witness")
		outs, werr := clients.RunHoldWitness(ctx, clients.WitnessConfig{WorkDir: filepath.Join(work, "witness"), Binary: bin, AgentJar: jar, TSDir: filepath.Join("harness", "clients", "ts")})
		res.Witness, res.WitnessRun = outs, true
		if werr != nil {
			res.WitnessError = werr.Error()
			fmt.Printf("FAIL witness: %v\n", werr)
			err = errors.Join(err, werr)
		} else {
			for _, o := range outs {
				fmt.Printf("WITNESS %s: without the hold, failed-build-hold failed as required: %s\n", o.Lane, o.Evaluation.Scenarios[2].Error)
			}
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; docs/client-matrix.md left as is: %w", errors.Join(err, ctx.Err()))
	}
	if only != nil {
		fmt.Printf("clients: evidence in %s; docs/client-matrix.md left as is (partial run)\n", work)
		return err
	}
	if werr := writeClientMatrix(work); werr != nil {
		return errors.Join(err, werr)
	}
	fmt.Printf("clients: evidence in %s; docs/client-matrix.md regenerated\n", work)
	return err
}

// ClientsDoc regenerates docs/client-matrix.md from the evaluation.json and evidence.json files of a finished run (WORK_DIR, default: the newest work/clients-*).
func ClientsDoc() error {
	work := os.Getenv("WORK_DIR")
	if work == "" {
		runs, _ := filepath.Glob(filepath.Join("work", "clients-2*"))
		if len(runs) == 0 {
			return errors.New("no work/clients-* run found: run go tool mage clients, or set WORK_DIR")
		}
		sort.Strings(runs)
		work = runs[len(runs)-1]
	}
	return writeClientMatrix(work)
}

// writeClientMatrix writes docs/client-matrix.md from the files of the run in work.
func writeClientMatrix(work string) error {
	res, err := clients.LoadMatrix(work)
	if err != nil {
		return err
	}
	return clients.WriteMatrixDoc(filepath.Join("docs", "client-matrix.md"), res)
}

// ClientsWitness proves the client lanes can fail: with the hold removed from failed-build-hold, the go-sdk and TypeScript lanes must fail there (probe 3, want 2).
func ClientsWitness(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	bin, jar, work, err := clientsPrepare(ctx, "clients-witness")
	if err != nil {
		return err
	}
	outs, err := clients.RunHoldWitness(ctx, clients.WitnessConfig{WorkDir: work, Binary: bin, AgentJar: jar, TSDir: filepath.Join("harness", "clients", "ts")})
	if err != nil {
		return err
	}
	for _, o := range outs {
		fmt.Printf("WITNESS %s: without the hold, failed-build-hold failed as required: %s\n", o.Lane, o.Evaluation.Scenarios[2].Error)
	}
	return nil
}

// clientsPrepare builds bin/buildguard and the reference agent jar and picks
// the run's work directory (WORK_DIR, default work/<prefix>-<UTC time>).
func clientsPrepare(ctx context.Context, prefix string) (bin, jar, work string, err error) {
	if bin, err = buildBuildguard(ctx); err != nil {
		return "", "", "", err
	}
	if jar, err = refagent.Build(ctx, filepath.Join("bin", "refagent")); err != nil {
		return "", "", "", err
	}
	work = os.Getenv("WORK_DIR")
	if work == "" {
		work = filepath.Join("work", prefix+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	work, err = filepath.Abs(work)
	return bin, jar, work, err
}
