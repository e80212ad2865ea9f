//go:build unix

package hostlanes

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSettleGroupKillsWhatOutlivesTheLeader(t *testing.T) {
	cmd := exec.CommandContext(context.Background(), "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
	group(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	if !settleGroup(cmd, 100*time.Millisecond) {
		t.Fatal("settleGroup found nothing left, but the sleep outlived its shell")
	}
	// The sleep is the shell's child, reaped by init once killed: wait for it to go.
	deadline := time.Now().Add(10 * time.Second)
	for !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs 10 s after settleGroup killed its group", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}

	quiet := exec.CommandContext(context.Background(), "sh", "-c", "exit 0")
	group(quiet)
	if err := quiet.Run(); err != nil {
		t.Fatal(err)
	}
	if settleGroup(quiet, 5*time.Second) {
		t.Error("settleGroup reports a leftover of a shell that left nothing")
	}
}

func TestRunHostSaysItWasStopped(t *testing.T) {
	l := &Lane{Dir: t.TempDir(), Home: t.TempDir(), Project: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	stop := time.AfterFunc(100*time.Millisecond, cancel)
	defer stop.Stop()
	code, left, err := runHost(ctx, l, "/bin/sh", []string{"-c", "sleep 60"}, nil)
	if err == nil || !strings.Contains(err.Error(), "stopped") || strings.Contains(err.Error(), "did not end within") {
		t.Fatalf("runHost of a stopped run: %v, want it to say the host was stopped", err)
	}
	if code != -1 || left {
		t.Errorf("runHost: exit code %d, left %v; want -1 (killed), nothing left", code, left)
	}
}
