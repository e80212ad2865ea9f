//go:build unix

package main

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The commands of testdata/mcp/http.txtar.
var httpScriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"httppost":  cmdHTTPPost,
	"filemode":  cmdFileMode,
	"sametoken": cmdSameToken,
	"waitfile":  cmdWaitFile,
	"signal":    cmdSignal,
}

// httppost [-notoken|-bearer] URLFILE BODY: POSTs BODY to the URL in
// URLFILE (as printed, token in the query; -notoken drops it, -bearer moves
// it into Authorization: Bearer) and prints "STATUS BODY" on stdout.
func cmdHTTPPost(ts *testscript.TestScript, neg bool, args []string) {
	mode := ""
	if len(args) == 3 {
		mode, args = args[0], args[1:]
	}
	if neg || len(args) != 2 || (mode != "" && mode != "-notoken" && mode != "-bearer") {
		ts.Fatalf("usage: httppost [-notoken|-bearer] URLFILE BODY")
	}
	u := readURL(ts, args[0])
	token := u.Query().Get("token")
	if mode != "" {
		u.RawQuery = ""
	}
	req, err := http.NewRequest(http.MethodPost, u.String(), strings.NewReader(args[1]))
	ts.Check(err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if mode == "-bearer" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	ts.Check(err)
	ts.Stdout().Write([]byte(strconv.Itoa(resp.StatusCode) + " " + string(b)))
}

func readURL(ts *testscript.TestScript, file string) *url.URL {
	b, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	u, err := url.Parse(strings.TrimSpace(string(b)))
	ts.Check(err)
	return u
}

// filemode FILE MODE: FILE's permission bits are MODE (octal).
func cmdFileMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: filemode FILE MODE")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	st, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := uint64(st.Mode().Perm()); (got == want) == neg {
		ts.Fatalf("%s has mode %o", args[0], got)
	}
}

// sametoken URLFILE1 URLFILE2: both URLs carry the same token.
func cmdSameToken(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sametoken URLFILE1 URLFILE2")
	}
	a, b := readURL(ts, args[0]).Query().Get("token"), readURL(ts, args[1]).Query().Get("token")
	if (a == b) == neg {
		ts.Fatalf("tokens %q and %q", a, b)
	}
}
