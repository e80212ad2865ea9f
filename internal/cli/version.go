package cli

// Version is the binary's version, set at link time with
// -ldflags "-X github.com/buildguard/buildguard/internal/cli.Version=v1.2.3".
// It is "dev" when unset; `buildguard version` and the MCP serverInfo print it.
var Version = "dev"
