package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.ts.URL+httpfront.HTTPPath, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := f.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ""
		}
		f.t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
