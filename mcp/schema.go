package mcp

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
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

// The maximum length of every string argument (docs/mcp-server.md#4.0).
const maxArgLength = 4096

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
func timeoutDescription(defaultMs int) string {
	return fmt.Sprintf("Timeout in milliseconds as an integer string, 1-60000. Default %d.", defaultMs)
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

//go:embed outputschemas/*.json
var outputSchemaFiles embed.FS

// OutputSchema returns the output schema (JSON Schema 2020-12,
// docs/mcp-server.md#4.11) of one of the nine tools, as tools/list advertises it
// from 2025-06-18 on.
func OutputSchema(tool string) (json.RawMessage, bool) {
	if _, err := outputSchemaFiles.ReadFile("outputschemas/" + tool + ".json"); err != nil {
		return nil, false
	}
	return outputSchema(tool), true
}

// outputSchema returns the checked-in output schema of a tool. A missing or
// invalid file is a build defect.
func outputSchema(tool string) json.RawMessage {
	b, err := outputSchemaFiles.ReadFile("outputschemas/" + tool + ".json")
	if err != nil {
		panic(fmt.Sprintf("output schema of %s: %v", tool, err))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		panic(fmt.Sprintf("output schema of %s: %v", tool, err))
	}
	return compact.Bytes()
}
