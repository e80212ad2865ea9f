package mcptest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Post sends body to url with the bearer token and the headers every
// streamable HTTP client sends, plus extra (name, value pairs), and returns
// the status and the body; a request that fails once ctx is done is status
// 0 and no body.
func Post(t testing.TB, ctx context.Context, client *http.Client, url, token, body string, extra ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ""
		}
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
