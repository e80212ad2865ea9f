// Command wrapsdk is wrap (package wrapfloor) in a program that also links
// go-sdk's mcp package, as buildguard's one binary does (docs/decisions.md#D1):
// the same work, plus the start-up cost of linking the SDK, which Go pays in
// every process whichever command it serves (docs/performance.md#4).
package main

import (
	"github.com/buildguard/buildguard/harness/floor/internal/wrapfloor"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() { wrapfloor.Main() }
