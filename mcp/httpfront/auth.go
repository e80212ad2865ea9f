package httpfront

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// TokenParam is the query parameter that may carry the token.
const TokenParam = "token"

// authorized reports whether r carries the token, as a Bearer credential or
// as the token query parameter; both are compared in constant time.
func (h *Handler) authorized(r *http.Request) bool {
	ok := false
	if scheme, cred, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		ok = h.matches(strings.TrimSpace(cred))
	}
	if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
		for _, v := range q[TokenParam] {
			ok = h.matches(v) || ok
		}
	}
	return ok
}

// matches compares the hashes of both tokens, so neither their contents
// nor their lengths shape the time taken.
func (h *Handler) matches(candidate string) bool {
	sum := sha256.Sum256([]byte(candidate))
	return subtle.ConstantTimeCompare(sum[:], h.token[:]) == 1
}

// sameLoopbackOrigin reports whether Host, and Origin when present, name
// this server: a loopback name (127.0.0.1, [::1], localhost) and the port
// the request came in on.
func sameLoopbackOrigin(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	_, port, err := net.SplitHostPort(local.String())
	if err != nil || !loopbackHostPort(r.Host, port) {
		return false
	}
	origins := r.Header.Values("Origin")
	if len(origins) == 0 {
		return true
	}
	if len(origins) > 1 {
		return false
	}
	u, err := url.Parse(origins[0])
	if err != nil || u.Scheme != "http" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	return loopbackHostPort(u.Host, port)
}

// loopbackHostPort reports whether hostport is a loopback name with port.
func loopbackHostPort(hostport, port string) bool {
	host, p, err := net.SplitHostPort(hostport)
	return err == nil && p == port && IsLoopbackName(host)
}

// IsLoopbackName reports whether host (without brackets or port) is one of
// the loopback names docs/decisions.md#D14 allows: 127.0.0.1, ::1 or localhost.
func IsLoopbackName(host string) bool {
	return host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")
}
