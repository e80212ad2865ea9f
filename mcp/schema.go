package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// obj is a JSON object that keeps its keys in the order written, so input
// schemas list their properties in the documented order.
type obj []member

type member struct {
	key string
	val any
}

// MarshalJSON encodes o with its keys in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.val)
		if err != nil {
			return nil, fmt.Errorf("encoding %q: %w", m.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Patterns and limits shared by input and output schemas.
const (
	ownerPattern    = "^[A-Za-z0-9_-]{1,64}$"
	sha256Pattern   = "^[0-9a-f]{64}$"
	maxClassNameLen = 256
)

// stringProp is {"type":"string","maxLength":max,"description":…}.
func stringProp(max int, description string) obj {
	return obj{{"type", "string"}, {"maxLength", max}, {"description", description}}
}

// commonProps are the endpoint properties every tool accepts, in order:
// projectDir, portFile, port, hybrisHome, timeoutMs.
func commonProps(timeoutDescription string) obj {
	return obj{
		{"projectDir", stringProp(maxArgLength, "Project directory, relative to the server's base. Selects the project: its .reclazz/agent.port is discovered and the agent's working directory must lie inside it.")},
		{"portFile", stringProp(maxArgLength, "Agent port file, relative to the effective project. No fallback to discovery when it is missing.")},
		{"port", stringProp(maxArgLength, "Agent status port on 127.0.0.1 (1-65535). Wins over portFile, hybrisHome and discovery.")},
		{"hybrisHome", stringProp(maxArgLength, "Hybris home directory; only <hybrisHome>/.reclazz/agent.port is tried.")},
		{"timeoutMs", stringProp(maxArgLength, timeoutDescription)},
	}
}

// timeoutDescription states a tool's default timeout (docs/decisions.md#D7).
func timeoutDescription(def time.Duration) string {
	return fmt.Sprintf("Timeout in milliseconds as an integer string, 1-%d. Default %d.", maxTimeoutMs, def.Milliseconds())
}

// inputSchema is {"type":"object","properties":{common…, extra…},"required":[…]}.
func inputSchema(timeout string, extra obj, required ...string) obj {
	if required == nil {
		required = []string{}
	}
	return obj{
		{"type", "object"},
		{"properties", append(commonProps(timeout), extra...)},
		{"required", required},
	}
}
