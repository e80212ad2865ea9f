// Command fakeagent runs the fake Reclazz agent of package fakeagent as a
// program, for trying buildguard without a JVM and for scripts that need the
// agent as a separate process:
//
//	go run ./harness/fakeagent/cmd/fakeagent -log agent.log -reject started
//
// It listens on loopback, writes .reclazz/agent.port (or -portfile), serves
// until SIGINT or SIGTERM, and then prints accepted=N. The flags are those of
// [fakeagent.Main].
package main

import (
	"os"

	"github.com/buildguard/buildguard/harness/fakeagent"
)

func main() { os.Exit(fakeagent.Main(os.Args[1:])) }
