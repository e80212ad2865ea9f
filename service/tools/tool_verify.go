package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/internal/boundedfile"
)

// ToolVerify asks for the exact-byte reload receipt of one class.
const ToolVerify = "reclazz_verify"

func verifyTool() *Tool {
	return &Tool{
		Name:        ToolVerify,
		description: "Exact-byte completion check of one class: does the running JVM hold the class file with this SHA-256? Only status applied counts as success; the result is a point-in-time receipt, so poll with a deadline.",
		inputSchema: func() agentproto.Object {
			return inputSchema(timeoutDescription(sessionTimeout), object(
				"className", stringProp(maxClassNameLen, "Binary class name, e.g. com.example.Service$Inner."),
				"sha256", stringProp(maxArgLength, "Lower-case hex SHA-256 (64 digits) of the compiled class file."),
			), "className", "sha256")
		},
		outputSchema: verifyOutputSchema,
		annotations:  readOnly(),
		timeout:      sessionTimeout,
		check:        checkVerify,
		run:          runVerify,
		CLI: CLIForm{Command: "verify", Usage: "CLASS (SHA256 | --class-file FILE)",
			Flags: map[string]string{"--class-file": "classFile"}, Args: verifyArgs},
	}
}

func verifyArgs(pos []string, own map[string]string) (map[string]any, error) {
	file, hasFile := own["classFile"]
	switch {
	case hasFile && len(pos) == 1:
		sum, err := classFileSHA256(file)
		if err != nil {
			return nil, err
		}
		return map[string]any{"className": pos[0], "sha256": sum}, nil
	case !hasFile && len(pos) == 2:
		return map[string]any{"className": pos[0], "sha256": pos[1]}, nil
	}
	return nil, errors.New("verify takes CLASS and either SHA256 or --class-file FILE")
}

// classFileSHA256 hashes a class file named on the command line, read with
// the bound of docs/decisions.md#D13, before anything connects.
func classFileSHA256(file string) (string, error) {
	sum, err := boundedfile.SHA256(file, boundedfile.ClassFileLimit)
	if err != nil {
		return "", fmt.Errorf("reading the class file: %w; give the path of a regular .class file", err)
	}
	return sum, nil
}

func checkVerify(c *toolCall) error {
	if !agentproto.ValidClassName(c.str["className"]) || !agentproto.ValidSHA256(c.str["sha256"]) {
		return argError("reclazz_verify requires className and a lower-case 64-digit sha256")
	}
	return nil
}

const notVerified = "Reload not verified: no valid correlated receipt"

// runVerify asks for the exact-byte receipt of one class. Only "applied" is
// success.
func runVerify(ctx context.Context, c *toolCall) (Result, error) {
	class, sha := c.str["className"], c.str["sha256"]
	conn, err := c.sessionOpen(ctx)
	if err != nil {
		return verifyUnavailable(class, sha, c.sessionMessage(err))
	}
	defer conn.Close()
	sctx, cancel := c.step(ctx)
	defer cancel()
	r, err := conn.Verify(sctx, class, sha)
	if err != nil {
		return verifyUnavailable(class, sha, notVerified+" ("+c.words(err)+")")
	}
	return result(c.passThrough.filter(ToolVerify, r.Raw), r.Status != agentproto.ReceiptApplied, "")
}

func verifyUnavailable(class, sha, detail string) (Result, error) {
	return result(object("status", "unavailable", "className", class, "expectedSha256", sha, "detail", detail), true, "")
}

// verifyOutputSchema allows extra properties: a valid receipt is the agent's
// object as received, its own extra fields passed through (passthrough.go).
const verifyOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  ` + receiptSchemaMembers + `
}`

// receiptSchemaMembers are the members of the schema of one receipt, the
// result of reclazz_verify and each result of reclazz_verify_batch.
const receiptSchemaMembers = `"type": "object",
  "properties": {
    "requestId": {"type": "string"},
    "sessionId": {"type": "string"},
    "className": {"type": "string"},
    "expectedSha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    "observedSha256": {"type": "string"},
    "status": {"type": "string", "enum": ["applied", "failed", "unverified", "running", "mismatch", "not_observed", "unavailable"]},
    "source": {"type": "string"},
    "detail": {"type": "string"},
    "completedAt": {"type": "string"}
  },
  "required": ["status", "className", "expectedSha256", "detail"],
  "anyOf": [
    {"properties": {"status": {"enum": ["unavailable"]}}},
    {"properties": {"status": {"enum": ["applied", "failed", "unverified", "running", "mismatch", "not_observed"]}},
     "required": ["requestId", "sessionId", "className", "expectedSha256", "observedSha256", "status", "source", "detail", "completedAt"]}
  ]`
