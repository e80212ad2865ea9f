package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
)

// ToolVerifyBatch verifies up to 32 classes in order on one connection.
const ToolVerifyBatch = "reclazz_verify_batch"

func verifyBatchTool() *Tool {
	return &Tool{
		Name:        ToolVerifyBatch,
		description: "Verify 1-32 unique className/sha256 pairs in order on one connection within one total timeout. Only allApplied confirms the individual receipts, and the batch is never atomic. Cancellable through notifications/cancelled; there is no automatic retry.",
		inputSchema: func() agentproto.Object {
			item := object(
				"type", "object",
				"additionalProperties", false,
				"properties", object(
					"className", stringProp(maxClassNameLen, "Binary class name, e.g. com.example.Service$Inner."),
					"sha256", object("type", "string", "maxLength", 64, "pattern", sha256Pattern, "description", "Lower-case hex SHA-256 (64 digits) of the compiled class file."),
				),
				"required", []string{"className", "sha256"},
			)
			return inputSchema(fmt.Sprintf("Total budget in milliseconds for connect, handshake and every receipt, as an integer string, 1-%d. Default %d.", maxTimeoutMs, sessionTimeout.Milliseconds()), object(
				"items", object("type", "array", "minItems", 1, "maxItems", maxBatchItems, "items", item),
			), "items")
		},
		outputSchema: verifyBatchOutputSchema,
		annotations:  readOnly(),
		timeout:      sessionTimeout,
		check: func(c *toolCall) error {
			_, err := batchItems(c.args["items"])
			return err
		},
		run: runBatch,
		CLI: CLIForm{Command: "verify-batch", Usage: "(CLASS=SHA256 | CLASS=@FILE)...", Args: batchArgs},
	}
}

func batchArgs(pos []string, _ map[string]string) (map[string]any, error) {
	if len(pos) == 0 {
		return nil, errors.New("verify-batch takes at least one CLASS=SHA256 or CLASS=@FILE")
	}
	items := make([]map[string]string, 0, len(pos))
	for _, p := range pos {
		class, value, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not CLASS=SHA256 or CLASS=@FILE", p)
		}
		if file, isFile := strings.CutPrefix(value, "@"); isFile {
			sum, err := classFileSHA256(file)
			if err != nil {
				return nil, err
			}
			value = sum
		}
		items = append(items, map[string]string{"className": class, "sha256": value})
	}
	return map[string]any{"items": items}, nil
}

// batchItem is one verify_batch pair.
type batchItem struct{ class, sha string }

const batchItemsError = "items must contain 1–32 unique className/lower-case sha256 pairs, with no extra fields"

func batchItems(raw json.RawMessage) ([]batchItem, error) {
	var list []map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &list) != nil || len(list) < 1 || len(list) > maxBatchItems {
		return nil, argError(batchItemsError)
	}
	seen := map[string]bool{}
	items := make([]batchItem, 0, len(list))
	for _, m := range list {
		if m == nil || len(m) != 2 {
			return nil, argError(batchItemsError)
		}
		var it batchItem
		if json.Unmarshal(m["className"], &it.class) != nil || json.Unmarshal(m["sha256"], &it.sha) != nil ||
			!agentproto.ValidClassName(it.class) || !agentproto.ValidSHA256(it.sha) || seen[it.class] {
			return nil, argError(batchItemsError)
		}
		if m["className"][0] != '"' || m["sha256"][0] != '"' {
			return nil, argError(batchItemsError)
		}
		seen[it.class] = true
		items = append(items, it)
	}
	return items, nil
}

const (
	batchDetail = "Ordered point-in-time receipts from one connection; not atomic and no proof of application behaviour."
	batchFiller = "No validated receipt: connection, deadline, cancellation or session consistency failed; subsequent items were not queried."
)

// runBatch verifies up to 32 classes on one connection within one total
// deadline, in input order, stopping at the first failure.
func runBatch(ctx context.Context, c *toolCall) (Result, error) {
	items, _ := batchItems(c.args["items"])
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	results := make([]agentproto.Object, 0, len(items))
	session, applied := "", 0
	if ctx.Err() == nil {
		if conn, err := c.sessionOpen(ctx); err == nil {
			for _, it := range items {
				r, err := conn.Verify(ctx, it.class, it.sha)
				if err != nil || session != "" && r.SessionID != session {
					break
				}
				session = r.SessionID
				if r.Status == agentproto.ReceiptApplied {
					applied++
				}
				results = append(results, c.passThrough.filter(ToolVerify, r.Raw))
			}
			conn.Close()
		}
	}
	status := "incomplete"
	switch {
	case len(results) < len(items):
		status = "unavailable"
		for _, it := range items[len(results):] {
			results = append(results, object("className", it.class, "expectedSha256", it.sha, "status", "unavailable", "detail", batchFiller))
		}
	case applied == len(items):
		status = "applied"
	}
	all := status == "applied"
	return result(object("status", status, "detail", batchDetail, "sessionId", session, "requestedCount", len(items),
		"allApplied", all, "atomic", false, "reloadConfirmed", false, "results", results), !all, "")
}

// verifyBatchOutputSchema: each result is a verify receipt, which allows
// extra properties and passes the agent's own extra fields through
// (passthrough.go); the batch object itself is buildguard's.
const verifyBatchOutputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["applied", "incomplete", "unavailable"]},
    "detail": {"type": "string"},
    "sessionId": {"type": "string"},
    "requestedCount": {"type": "integer", "minimum": 1, "maximum": 32},
    "allApplied": {"type": "boolean"},
    "atomic": {"type": "boolean", "const": false},
    "reloadConfirmed": {"type": "boolean", "const": false},
    "results": {"type": "array", "minItems": 1, "maxItems": 32, "items": {
  ` + receiptSchemaMembers + `
    }}
  },
  "required": ["status", "detail", "sessionId", "requestedCount", "allApplied", "atomic", "reloadConfirmed", "results"],
  "allOf": [
    {
      "if": {"properties": {"status": {"const": "applied"}}, "required": ["status"]},
      "then": {"properties": {"allApplied": {"const": true}, "sessionId": {"minLength": 1}, "results": {"items": {"properties": {"status": {"const": "applied"}}}}}},
      "else": {"properties": {"allApplied": {"const": false}}}
    }
  ]
}`
