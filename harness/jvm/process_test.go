package jvm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A JVM's output lines reach Lines and the log file; a line awaited after
// the JVM exited fails at once with ErrExited instead of waiting it out; Kill
// after the exit is harmless and idempotent.
func TestProcessLinesExitAndKill(t *testing.T) {
	t.Parallel()
	if _, err := Tool("java"); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "jvm.log")
	p, err := Start(Config{Args: []string{"-version"}, LogFile: logFile})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if _, err := p.WaitLine(context.Background(), 0, time.Minute, func(s string) bool { return strings.Contains(s, "version") }); err != nil {
		t.Fatalf("no version line: %v; lines:\n%s", err, p.Lines().Tail(5))
	}
	start := time.Now()
	_, err = p.WaitLine(context.Background(), 0, time.Minute, func(s string) bool { return s == "never printed" })
	if !errors.Is(err, ErrExited) || time.Since(start) > 30*time.Second {
		t.Fatalf("WaitLine after exit = %v after %v, want ErrExited at once", err, time.Since(start))
	}
	if p.Running() {
		t.Fatal("Running after the exit")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), "version") {
		t.Fatalf("log file %q, %v", b, err)
	}
}

// Kill ends a JVM that would run forever, and a second Kill returns at once.
func TestProcessKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "Forever.java")
	if err := os.WriteFile(src, []byte("public class Forever { public static void main(String[] a) throws Exception { System.out.println(\"UP\"); Thread.sleep(600000); } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// java runs a single source file directly (JEP 330).
	p, err := Start(Config{Args: []string{src}, Dir: dir, Stdin: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitLine(context.Background(), 0, time.Minute, func(s string) bool { return s == "UP" }); err != nil {
		p.Kill()
		t.Fatalf("no UP line: %v", err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Kill returned while the JVM still runs")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
}
