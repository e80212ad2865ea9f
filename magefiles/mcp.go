//go:build mage

package main

import "github.com/magefile/mage/sh"

// MCPRace runs the MCP batch, cancellation and EOF tests (of the server,
// its stdio transport and its tasks) 20 times under the race detector.
func MCPRace() error {
	return sh.RunV("go", "test", "-race", "-count=20", "-run", "Batch|EOF|SameID|Cancel", "./mcp/", "./mcp/stdio/", "./service/mcptask/")
}

// MCPSnapshots rewrites the tools/list snapshots and the stdio transcripts
// after an intended change; review the diff before committing.
func MCPSnapshots() error {
	if err := sh.RunWithV(map[string]string{"UPDATE_TOOLSNAPS": "true"}, "go", "test", "-run", "TestToolSnaps", "./mcp/"); err != nil {
		return err
	}
	return sh.RunV("go", "test", "-run", "TestTranscripts", "./mcp/", "./mcp/stdio/", "-update")
}
