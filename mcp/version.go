package mcp

// The protocol versions served through initialize (docs/decisions.md#D5),
// oldest first, and the sessionless version served per request
// (docs/decisions.md#D14).
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	// Version20260728 is never negotiated through initialize: a request
	// carries it in params._meta (with the client's capabilities) and is
	// served on its own, without a session, after server/discover.
	Version20260728 = "2026-07-28"
)

// sdkVersions is what the SDK may serve: the initialize versions and the
// sessionless one, newest first (server/discover lists them).
func sdkVersions() []string {
	return append([]string{Version20260728}, SupportedVersions()...)
}

// SupportedVersions returns the versions initialize answers with, newest
// first.
func SupportedVersions() []string {
	return []string{Version20251125, Version20250618, Version20250326, Version20241105}
}

// negotiate applies docs/decisions.md#D5: a supported version is answered with itself, any
// other (non-blank; the transport refused blank ones) with the newest.
func negotiate(requested string) string {
	for _, v := range SupportedVersions() {
		if v == requested {
			return v
		}
	}
	return Version20251125
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
	case Version20260728:
		return shape{annotations: true, outputSchema: true, structured: true, argToolError: true, sessionless: true}
	case Version20251125:
		return shape{annotations: true, outputSchema: true, structured: true, argToolError: true}
	case Version20250618:
		return shape{annotations: true, outputSchema: true, structured: true}
	case Version20250326:
		return shape{annotations: true}
	default:
		return shape{}
	}
}
