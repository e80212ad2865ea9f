// Package cli is buildguard's command line: it parses every form of docs/decisions.md#D1 (the
// wrapper, `mcp`, the tool subcommands, `init`, `version`) by one flag
// grammar (flags.go), runs the matching core function, and maps the outcome
// to an exit code in one place.
// It owns no behaviour of its own beyond parsing, printing and exit codes.
package cli
