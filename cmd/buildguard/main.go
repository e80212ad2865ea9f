// Command buildguard guards a live-reloaded JVM against half-built output.
// See README.md for the forms it takes.
package main

import (
	"os"

	"github.com/buildguard/buildguard/cli"
)

func main() { os.Exit(int(cli.Main(os.Args[1:]))) }
