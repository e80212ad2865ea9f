//go:build !unix

package jvm

import "os/exec"

// setGroup leaves the JVM in the caller's group: there are no process groups.
func setGroup(*exec.Cmd) {}

// killGroup kills the JVM.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
