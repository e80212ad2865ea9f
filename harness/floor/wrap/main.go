// Command wrap is the floor of buildguard's wrapper: the two BUILD round
// trips around the command (package wrapfloor), in a program that links
// nothing but net and os/exec (docs/performance.md#1).
package main

import "github.com/buildguard/buildguard/harness/floor/internal/wrapfloor"

func main() { wrapfloor.Main() }
