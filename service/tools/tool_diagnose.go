package tools

import (
	"context"
	"errors"

	"github.com/buildguard/buildguard/agentproto"
)

// ToolDiagnose explains the last reload of one class.
const ToolDiagnose = "reclazz_diagnose"

func diagnoseTool() *Tool {
	return &Tool{
		Name:        ToolDiagnose,
		description: "Explain the last reload of one class. className (a binary class name such as app.Main$Inner) is required.",
		inputSchema: func() agentproto.Object {
			return inputSchema(timeoutDescription(simpleTimeout), object(
				"className", stringProp(maxClassNameLen, "Binary class name, e.g. com.example.Service$Inner."),
			), "className")
		},
		outputSchema: diagnoseOutputSchema,
		annotations:  readOnly(),
		timeout:      simpleTimeout,
		check: func(c *toolCall) error {
			if !agentproto.ValidClassName(c.str["className"]) {
				return argError("reclazz_diagnose requires a valid binary className of at most 256 characters")
			}
			return nil
		},
		run: func(ctx context.Context, c *toolCall) (Result, error) {
			class := c.str["className"]
			return runQuery(ctx, c, "DIAGNOSE "+class, "Diagnosis query failed: ", &class)
		},
		CLI: CLIForm{Command: "diagnose", Usage: "CLASS",
			Args: func(pos []string, _ map[string]string) (map[string]any, error) {
				if len(pos) != 1 {
					return nil, errors.New("diagnose takes one CLASS")
				}
				return map[string]any{"className": pos[0]}, nil
			}},
	}
}

const diagnoseOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["observed", "unavailable"]},
    "lines": {"type": "array", "items": {"type": "string"}},
    "detail": {"type": "string"},
    "complete": {"type": "boolean", "const": false},
    "className": {"type": "string"}
  },
  "required": ["status", "lines", "detail", "complete", "className"]
}`
