package httpfront

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/protocol"
)

// TestFixtureServesItsMethodsWithoutToken: a front configured with a
// Fixture (docs/http.md#6.2) serves without a token, exactly the methods
// its Forward lets through, with the params as Forward gives them; a
// method it refuses is -32601, and 404 at 2026-07-28. The same SDK server
// behind a front without a Fixture needs the token and serves buildguard's
// methods only.
func TestFixtureServesItsMethodsWithoutToken(t *testing.T) {
	t.Parallel()
	sdk := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "test", Version: "test"}, nil)
	sdk.AddPrompt(&sdkmcp.Prompt{Name: "fixture_prompt"}, func(context.Context, *sdkmcp.GetPromptRequest) (*sdkmcp.GetPromptResult, error) {
		return &sdkmcp.GetPromptResult{}, nil
	})
	var mu sync.Mutex
	var forwarded []string // the methods the fixture's Forward saw
	fixture := &Fixture{Forward: func(m protocol.Message) (json.RawMessage, *protocol.Refusal) {
		mu.Lock()
		forwarded = append(forwarded, m.Method)
		mu.Unlock()
		if m.Method != "prompts/list" && m.Method != "server/discover" {
			return nil, &protocol.Refusal{ID: m.ID.Raw, Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + m.Method}
		}
		return m.Params, nil
	}}
	fx := httptest.NewServer(New(Config{SDK: sdk, Calls: NewCalls(nil), Fixture: fixture}))
	t.Cleanup(fx.Close)
	bg := httptest.NewServer(New(Config{SDK: sdk, Calls: NewCalls(nil), Token: testToken}))
	t.Cleanup(bg.Close)

	post := func(url, method, version, token string) (int, string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `"}`
		if version != "" {
			body = `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
		}
		req, _ := http.NewRequest(http.MethodPost, url+HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
			req.Header.Set("Mcp-Method", method)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if status, body := post(fx.URL, "prompts/list", "", ""); status != http.StatusOK || !strings.Contains(body, `"fixture_prompt"`) || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":7,"result":`) {
		t.Errorf("fixture prompts/list without a token: %d %s", status, body)
	}
	if status, body := post(fx.URL, "server/discover", "2026-07-28", ""); status != http.StatusOK || !strings.Contains(body, `"prompts"`) {
		t.Errorf("fixture server/discover at 2026-07-28: %d %s", status, body)
	}
	if status, body := post(fx.URL, "tools/list", "", ""); status != http.StatusOK || !strings.Contains(body, `"code":-32601`) {
		t.Errorf("fixture tools/list (refused by Forward): %d %s", status, body)
	}
	if status, body := post(fx.URL, "tools/list", "2026-07-28", ""); status != http.StatusNotFound || !strings.Contains(body, `"code":-32601`) {
		t.Errorf("fixture tools/list at 2026-07-28 (refused by Forward): %d %s, want 404 with -32601", status, body)
	}

	if status, _ := post(bg.URL, "prompts/list", "", ""); status != http.StatusUnauthorized {
		t.Errorf("without a Fixture, a request without the token: %d, want 401", status)
	}
	if status, body := post(bg.URL, "prompts/list", "", testToken); status != http.StatusOK || !strings.Contains(body, `"code":-32601`) {
		t.Errorf("without a Fixture, prompts/list (not a method buildguard serves): %d %s", status, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"prompts/list", "server/discover", "tools/list", "tools/list"}; !slices.Equal(forwarded, want) {
		t.Errorf("the fixture's Forward saw %v, want %v (the other front never uses it)", forwarded, want)
	}
}
