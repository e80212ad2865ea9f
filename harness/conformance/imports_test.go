package conformance_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestOnlyTestsImportConformance keeps the suite test infrastructure: no
// package of the module imports it outside its tests.
func TestOnlyTestsImportConformance(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const self = "github.com/buildguard/buildguard/harness/conformance"
	out, err := exec.CommandContext(ctx, "go", "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "github.com/buildguard/buildguard/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		for _, imp := range strings.Fields(imports) {
			if imp == self {
				t.Errorf("%s imports %s; only tests may", pkg, self)
			}
		}
	}
}
