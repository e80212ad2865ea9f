package doccheck

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// TestRepository: every citation in the repository resolves, and nothing
// points outside it. The fix for a failure is in its message.
func TestRepository(t *testing.T) {
	t.Parallel()
	// work/ and dist/ hold run outputs (acceptance, client matrix, release),
	// never tracked files.
	// This file is skipped: its fixtures are bad references on purpose.
	problems, err := Check(os.DirFS("../../.."), "work", "dist", "internal/repocheck/doccheck/doccheck_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestRepositoryHasTheContract: the contract pages exist and the scan sees
// their sections, so TestRepository cannot pass by finding no pages.
func TestRepositoryHasTheContract(t *testing.T) {
	t.Parallel()
	for page, want := range map[string][]string{
		"docs/agent-protocol.md": {"1", "1.4", "4.10", "13.2"},
		"docs/mcp-server.md":     {"1.1", "2.2", "4.0", "4.11", "6", "7"},
		"docs/build-safety.md":   {"1", "3", "4", "7"},
		"docs/decisions.md":      {"D1", "D8", "D16"},
	} {
		b, err := os.ReadFile("../../../" + page)
		if err != nil {
			t.Fatal(err)
		}
		secs := Sections(b)
		for _, s := range want {
			if !secs[s] {
				t.Errorf("%s: no section %s among %v", page, s, secs)
			}
		}
	}
}

func TestSections(t *testing.T) {
	t.Parallel()
	page := "# Title\n## 1. Transport\n### 1.4 Inbound\n#### 4.10 VERIFY\n## D12 — terminals\n" +
		"## Not numbered\n```\n## 9. inside a fence\n```\n##7. no space\n## 12.x not a number\n"
	got := Sections([]byte(page))
	want := map[string]bool{"1": true, "1.4": true, "4.10": true, "D12": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sections (-want +got):\n%s", diff)
	}
}

// TestCheck: each kind of bad reference is found on its line, and the good
// ones are not reported.
func TestCheck(t *testing.T) {
	t.Parallel()
	shared := "../" + "shared/spec"
	work := "/" + "work/shared"
	bare := "mcp-" + "server.md §4.1"
	index := "spec/" + "README.md"
	fsys := fstest.MapFS{
		"docs/mcp-server.md": {Data: []byte("# MCP\n## 4. Tools\n### 4.1 List\nAs §4 says, see [docs/decisions.md#D5](decisions.md#D5) and [x](decisions.md#D9).\n")},
		"docs/decisions.md":  {Data: []byte("# Decisions\n## D5 — versions\nD5 cites itself.\n")},
		"docs/other.md":      {Data: []byte("# Other\nD5 by its name is fine here; D7 is no decision.\n")},
		"docs/schema.json":   {Data: []byte("{}")},
		"a/ok.go": {Data: []byte("// docs/mcp-server.md#4.1, docs/mcp-server.md#4. and docs/decisions.md#D5.\n" +
			"// docs/mcp-server.md and docs/schema.json; <RepoDir>/work/x is relative.\n")},
		"a/bad.go": {Data: []byte("package a\n" +
			"// docs/mcp-server.md#4.2\n" +
			"// docs/hosts.md#1\n" +
			"// see " + shared + "\n" +
			"// at " + work + "\n" +
			"// " + bare + "\n" +
			"// " + index + "\n" +
			"// the wrapper (D8)\n" +
			"// docs/schema.json#1\n" +
			"// the reader of §1.4\n")},
		"a/testdata/x.txtar":    {Data: []byte("comment: docs/agent-protocol.md#7\n-- f --\n")},
		"a/README.md":           {Data: []byte("[page](decisions.md#D5) outside docs is not a docs link but names a page without docs/\n")},
		"a/skip.txt":            {Data: []byte(shared)},
		".hidden/x.go":          {Data: []byte(shared)},
		"work/acceptance/x.md":  {Data: []byte(shared)},
		"node_modules/m/x.md":   {Data: []byte(shared)},
		"docs/sub/ignored.json": {Data: []byte("{}")},
	}
	problems, err := Check(fsys, "work")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.File+":"+strconv.Itoa(p.Line)+": "+strings.SplitN(p.Msg, ";", 2)[0])
	}
	want := []string{
		"a/README.md:1: cites decisions.md without docs/",
		"a/bad.go:2: docs/mcp-server.md#4.2: docs/mcp-server.md has no section 4.2 (a heading starting with it)",
		"a/bad.go:3: docs/hosts.md#1: no such page under docs/",
		"a/bad.go:4: refers to the shared brief outside the repository",
		"a/bad.go:5: names an absolute path under the machine's work root",
		"a/bad.go:6: cites mcp-server.md without docs/",
		"a/bad.go:6: cites a section with §",
		"a/bad.go:7: cites the brief's spec index, outside the repository",
		"a/bad.go:8: bare decision D8",
		"a/bad.go:9: docs/schema.json#1: only Markdown pages have sections",
		"a/bad.go:10: cites a section with § and no page",
		"a/testdata/x.txtar:1: docs/agent-protocol.md#7: no such page under docs/",
		"docs/mcp-server.md:4: link (decisions.md#D9): docs/decisions.md has no section D9 (a heading starting with it)",
		"docs/other.md:2: decision D7: docs/decisions.md has no section D7",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestCheckMap: every path, transcript and test name the map names must
// exist where the row says; stale ones are found on their line.
func TestCheckMap(t *testing.T) {
	t.Parallel()
	row := func(code, tests string) string { return "| cap | [x](x.md) | " + code + " | " + tests + " |\n" }
	page := "# Contract\n## Pages\n| `not/checked.go` | here |\n## The map: contract → code → test\n" +
		"| capability | contract | code | tests |\n| --- | --- | --- | --- |\n" +
		row("`pkg/run.go`, `pkg/tool_<name>.go`", "`pkg/run_test.go` TestRunOK, TestRun*; FuzzParse; `go tool mage x`; `tools/list`") +
		row("`pkg`", "`pkg/script_test.go` TestScripts over `pkg/testdata/*.txtar` (`ok`, `failed`); `gone.txtar`") +
		row("`pkg/gone.go`", "`pkg/run_test.go` TestLimiter; TestLimiter") +
		row("`pkg`", "`pkg/script_test.go` TestScripts over `pkg/testdata/*.txtar` (`ok`, `refused`)") +
		row("`pkg` (`run.go`, `lost.go`)", "its own tests (TestRunOK)") +
		"## After the map\n| `no/such.go` | ignored |\n"
	fsys := fstest.MapFS{
		"docs/README.md":            {Data: []byte(page)},
		"docs/x.md":                 {Data: []byte("# X\n")},
		"pkg/run.go":                {Data: []byte("package pkg\n")},
		"pkg/tool_status.go":        {Data: []byte("package pkg\n")},
		"pkg/run_test.go":           {Data: []byte("package pkg\nfunc TestRunOK(t *testing.T) {}\nfunc TestRunFailed(t *testing.T) {}\n")},
		"pkg/fuzz_test.go":          {Data: []byte("package pkg\nfunc FuzzParse(f *testing.F) {}\n")},
		"pkg/output_test.go":        {Data: []byte("package pkg\nfunc TestLimiter(t *testing.T) {}\n")},
		"pkg/script_test.go":        {Data: []byte("package pkg\nfunc TestScripts(t *testing.T) {}\n")},
		"pkg/testdata/ok.txtar":     {Data: []byte("")},
		"pkg/testdata/gone.txtar":   {Data: []byte("")},
		"pkg/testdata/failed.txtar": {Data: []byte("")},
	}
	problems, err := Check(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"docs/README.md:9: `pkg/gone.go`: no such file or directory (pkg/gone.go)",
		"docs/README.md:9: TestLimiter: not declared in pkg/run_test.go",
		"docs/README.md:10: `refused`: no transcript pkg/testdata/refused.txtar",
		"docs/README.md:11: `lost.go`: no such file or directory (pkg/lost.go)",
		"docs/README.md:11: TestRunOK: no Go file or package named before it in its cell",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestCheckMapNamesEveryProductFile: a product Go file that no code cell
// names, by itself, by a glob or by its package in a cell naming none of
// the package's files, is found; tests, test-only helpers, the proof, the
// build and the checks need no row, and a test cell names no code.
func TestCheckMapNamesEveryProductFile(t *testing.T) {
	t.Parallel()
	row := func(code, tests string) string { return "| cap | [x](x.md) | " + code + " | " + tests + " |\n" }
	page := "# Contract\n## The map: contract → code → test\n### One\n" +
		"| capability | contract | code | tests |\n| --- | --- | --- | --- |\n" +
		row("`pkg/run.go`, `pkg/tool_<name>.go`", "`pkg/run_test.go` TestRun") +
		row("`leaf` (all of it)", "`pkg/run_test.go` TestRun") +
		row("`mixed` (`a.go`)", "`tested/t.go`") +
		"### Two\n| capability | code | contract | tests |\n| --- | --- | --- | --- |\n" +
		"| cap | `wide` | `pkg/other.go` | `cmd/tool/main.go` |\n"
	pkgFile := []byte("package x\n")
	fsys := fstest.MapFS{
		"docs/README.md":                 {Data: []byte(page)},
		"docs/x.md":                      {Data: []byte("# X\n")},
		"pkg/run.go":                     {Data: pkgFile},
		"pkg/run_test.go":                {Data: []byte("package pkg\nfunc TestRun(t *testing.T) {}\n")},
		"pkg/tool_a.go":                  {Data: pkgFile},
		"pkg/tool_b.go":                  {Data: pkgFile},
		"pkg/other.go":                   {Data: pkgFile},
		"pkg/testdata/fixture.go":        {Data: pkgFile},
		"pkg/toolstest/check.go":         {Data: pkgFile},
		"leaf/a.go":                      {Data: pkgFile},
		"leaf/b_linux.go":                {Data: pkgFile},
		"mixed/a.go":                     {Data: pkgFile},
		"mixed/b.go":                     {Data: pkgFile},
		"wide/w.go":                      {Data: pkgFile},
		"wide/sub/s.go":                  {Data: pkgFile},
		"tested/t.go":                    {Data: pkgFile},
		"cmd/tool/main.go":               {Data: pkgFile},
		"harness/fake/fake.go":           {Data: pkgFile},
		"magefiles/magefile.go":          {Data: pkgFile},
		"internal/testsupport/w/w.go":    {Data: pkgFile},
		"internal/repocheck/c/c.go":      {Data: pkgFile},
		"work/run/out.go":                {Data: pkgFile},
		".git/hooks/h.go":                {Data: pkgFile},
		"integrations/node_modules/m.go": {Data: pkgFile},
	}
	problems, err := Check(fsys, "work")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.File+":"+strconv.Itoa(p.Line)+": "+strings.SplitN(p.Msg, ";", 2)[0])
	}
	const msg = ":1: no row of the map in docs/README.md names this product file"
	want := []string{
		"cmd/tool/main.go" + msg,
		"mixed/b.go" + msg,
		"pkg/other.go" + msg,
		"tested/t.go" + msg,
		"wide/sub/s.go" + msg,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
