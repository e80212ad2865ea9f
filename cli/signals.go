package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// stopSignals are the signals that stop the CLI's long-running commands
// (`mcp`, `build run`) the way they stop the wrapper (docs/decisions.md#D12):
// SIGINT, SIGTERM, SIGQUIT — caught, so the Go runtime never prints its
// goroutine dump — and SIGHUP, unless it was ignored when the process
// started: under nohup it stays ignored, as the wrapper leaves it.
func stopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// signalExit is the exit code of a command a signal ended: 128+n.
func signalExit(s os.Signal) ExitCode {
	if n, ok := s.(syscall.Signal); ok {
		return ExitCode(128 + int(n))
	}
	return ExitFailure
}
