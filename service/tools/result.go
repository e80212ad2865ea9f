package tools

import (
	"encoding/json"
	"fmt"

	"github.com/buildguard/buildguard/agentproto"
)

// Result is what one tool call produced: the structured object (the MCP
// structuredContent, and what the CLI prints), whether it is a tool error,
// and the text a legacy (pre-2025-06-18) session shows instead of the JSON.
type Result struct {
	// Data is the result object, already encoded as one compact JSON object.
	Data json.RawMessage
	// IsError is the tool's isError flag.
	IsError bool
	// LegacyText is the content text for sessions below 2025-06-18; empty
	// from result means the JSON itself.
	LegacyText string
	// Text, when not empty, is the content text for sessions from
	// 2025-06-18 on instead of the JSON (a failed safe build leads with its
	// diagnostics, docs/safe-build.md#12).
	Text string
	// Links are resource_link contents after the text, for sessions from
	// 2025-06-18 on: resources the server serves through resources/read.
	Links []Link
}

// Link is a resource_link content: a resource the server serves.
type Link struct {
	// URI is the resource's URI, read back with resources/read.
	URI string
	// Name is its name; Description says what it is.
	Name, Description string
	// MIMEType is its media type; Size its length in bytes (-1: unknown).
	MIMEType string
	Size     int64
}

// result encodes data as the result object.
func result(data agentproto.Object, isError bool, legacy string) (Result, error) {
	raw, err := data.MarshalJSON()
	if err != nil {
		return Result{}, fmt.Errorf("encoding result: %w", err)
	}
	if legacy == "" {
		legacy = string(raw)
	}
	return Result{Data: raw, IsError: isError, LegacyText: legacy}, nil
}

// object builds an ordered JSON object from key/value pairs: a result
// object, or a piece of an input schema, whose keys keep the order written.
func object(kv ...any) agentproto.Object {
	o := agentproto.Object{}
	for i := 0; i+1 < len(kv); i += 2 {
		var err error
		if o, err = o.SetValue(kv[i].(string), kv[i+1]); err != nil {
			panic(err) // only plain values are passed here
		}
	}
	return o
}
