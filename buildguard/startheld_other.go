//go:build unix && !linux

package buildguard

import "os/exec"

// startHeld starts the build's command with start and calls ready with it
// once it runs. Only Linux can hold a child at its exec; elsewhere the
// record ready writes is not kept anyway (no /proc to name a process's
// start, docs/safe-build.md#4).
func startHeld(_ bool, build func() *exec.Cmd, start func(*exec.Cmd) error, ready func(*exec.Cmd), _ interface{ Debug(string, ...any) }) (*exec.Cmd, error) {
	cmd := build()
	if err := start(cmd); err != nil {
		return nil, err
	}
	ready(cmd)
	return cmd, nil
}
