package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/buildguard/buildguard/harness/mcptest"
	"github.com/buildguard/buildguard/mcp/httpfront"
)

// testToken is the token the tests over HTTP serve with.
const testToken = "test-token-0123456789abcdef"

// httpFixture posts to a served HTTP handler; the tests of the HTTP front
// itself are in package httpfront.
type httpFixture struct {
	t      *testing.T
	ts     *httptest.Server
	client *http.Client
}

// post sends body to /mcp with the token and the headers every streamable
// HTTP client sends, plus extra (name, value pairs).
func (f *httpFixture) post(ctx context.Context, body string, extra ...string) (int, string) {
	f.t.Helper()
	return mcptest.Post(f.t, ctx, f.client, f.ts.URL+httpfront.HTTPPath, testToken, body, extra...)
}
