//go:build unix

package clients

import (
	"context"
	"fmt"
	"runtime/debug"
)

// GoSDKModule is the Go SDK module the Go lanes use.
const GoSDKModule = "github.com/modelcontextprotocol/go-sdk"

// GoSDKVersions are the protocol versions the Go SDK lanes ask for, one lane
// each; VersionDefault is the SDK's own default.
var GoSDKVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125, VersionDefault}

// GoSDKLaneName names the Go SDK lane for a requested version.
func GoSDKLaneName(version string) string {
	if version == VersionDefault {
		return "go-sdk-default"
	}
	return "go-sdk-" + version
}

// GoSDKVersion is the linked go-sdk module version, or "unknown".
func GoSDKVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == GoSDKModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

// GoSDKDial returns a LaneConfig.Dial for the go-sdk client asking for version.
func GoSDKDial(lane, version string) func(context.Context, ServerCommand) (Client, error) {
	return func(ctx context.Context, s ServerCommand) (Client, error) {
		return DialGoSDK(ctx, lane, s, version)
	}
}

// GoSDKReferenceSchemas lists the tools in a separate 2025-06-18 go-sdk
// session and compiles their output schemas, for legacy sessions that do not
// advertise them.
func GoSDKReferenceSchemas(ctx context.Context, s ServerCommand) (*Schemas, error) {
	c, err := DialGoSDK(ctx, "reference-schemas", s, Version20250618)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	if v := c.ProtocolVersion(); v != Version20250618 {
		return nil, fmt.Errorf("reference session negotiated %s, want %s", v, Version20250618)
	}
	return CompileSchemas(tools)
}

// GoSDKLane returns the LaneConfig of the Go SDK lane for version; the caller
// fills in WorkDir, Binary, AgentJar and Metadata.
func GoSDKLane(version string) LaneConfig {
	name := GoSDKLaneName(version)
	return LaneConfig{
		Name:             name,
		Dial:             GoSDKDial(name, version),
		ReferenceSchemas: GoSDKReferenceSchemas,
	}
}
