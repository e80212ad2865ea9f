//go:build unix

package mcptask_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// The tests of this external package run the tasks extension on the real
// server (package mcp); these helpers are the mcp package's own test
// helpers, copied.

// testToken is the HTTP front's bearer token in these tests.
const testToken = "test-token-0123456789abcdef"

// testLogger logs at warn level (the default of `buildguard mcp`) into w.
func testLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "mcp", Level: hclog.Warn, Output: w, Color: hclog.ColorOff})
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
