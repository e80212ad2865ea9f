package mcp

import "github.com/buildguard/buildguard/mcp/protocol"

// sdkVersions is what the SDK may serve: the initialize versions and the
// sessionless one, newest first (server/discover lists them).
func sdkVersions() []string {
	return append([]string{protocol.Version20260728}, SupportedVersions()...)
}

// SupportedVersions returns the versions initialize answers with, newest
// first.
func SupportedVersions() []string {
	return []string{protocol.Version20251125, protocol.Version20250618, protocol.Version20250326, protocol.Version20241105}
}

// negotiate applies docs/decisions.md#D5: a supported version is answered with itself, any
// other (non-blank; the transport refused blank ones) with the newest.
func negotiate(requested string) string {
	for _, v := range SupportedVersions() {
		if v == requested {
			return v
		}
	}
	return protocol.Version20251125
}

// shape is what a session's version decides about tool output.
type shape struct {
	annotations  bool // tools/list carries annotations (2025-03-26 on)
	outputSchema bool // tools/list carries outputSchema (2025-06-18 on)
	structured   bool // tools/call carries structuredContent, text = its JSON (2025-06-18 on)
	argToolError bool // invalid arguments are isError results, not -32602 (2025-11-25, SEP-1303)
	sessionless  bool // results carry resultType and list results ttlMs/cacheScope (2026-07-28)
}

// shapeFor returns the shape of a session that negotiated version; "" is a
// session before initialize, which gets the legacy shape.
func shapeFor(version string) shape {
	switch version {
	case protocol.Version20260728:
		return shape{annotations: true, outputSchema: true, structured: true, argToolError: true, sessionless: true}
	case protocol.Version20251125:
		return shape{annotations: true, outputSchema: true, structured: true, argToolError: true}
	case protocol.Version20250618:
		return shape{annotations: true, outputSchema: true, structured: true}
	case protocol.Version20250326:
		return shape{annotations: true}
	default:
		return shape{}
	}
}
