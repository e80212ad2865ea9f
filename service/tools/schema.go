package tools

import (
	"fmt"
	"time"

	"github.com/buildguard/buildguard/agentproto"
)

// Patterns and limits shared by input and output schemas.
const (
	ownerPattern    = "^[A-Za-z0-9_-]{1,64}$"
	sha256Pattern   = "^[0-9a-f]{64}$"
	maxClassNameLen = 256
)

// stringProp is {"type":"string","maxLength":max,"description":…}.
func stringProp(max int, description string) agentproto.Object {
	return object("type", "string", "maxLength", max, "description", description)
}

// commonProps are the endpoint properties every tool accepts, in order:
// projectDir, portFile, port, hybrisHome, timeoutMs.
func commonProps(timeoutDescription string) agentproto.Object {
	return object(
		"projectDir", stringProp(maxArgLength, "Project directory, relative to the server's base. Selects the project: its .reclazz/agent.port is discovered and the agent's working directory must lie inside it."),
		"portFile", stringProp(maxArgLength, "Agent port file, relative to the effective project. No fallback to discovery when it is missing."),
		"port", stringProp(maxArgLength, "Agent status port on 127.0.0.1 (1-65535). Wins over portFile, hybrisHome and discovery."),
		"hybrisHome", stringProp(maxArgLength, "Hybris home directory; only <hybrisHome>/.reclazz/agent.port is tried."),
		"timeoutMs", stringProp(maxArgLength, timeoutDescription),
	)
}

// timeoutDescription states a tool's default timeout (docs/decisions.md#D7).
func timeoutDescription(def time.Duration) string {
	return fmt.Sprintf("Timeout in milliseconds as an integer string, 1-%d. Default %d.", maxTimeoutMs, def.Milliseconds())
}

// inputSchema is {"type":"object","properties":{common…, extra…},"required":[…]}.
func inputSchema(timeout string, extra agentproto.Object, required ...string) agentproto.Object {
	if required == nil {
		required = []string{}
	}
	return object(
		"type", "object",
		"properties", append(commonProps(timeout), extra...),
		"required", required,
	)
}
