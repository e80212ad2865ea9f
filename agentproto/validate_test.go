package agentproto

import (
	"strings"
	"testing"
)

func TestValidClassName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"A": true, "com.acme.OrderService$Line": true, "app.Örnek$Inner": true, "_x.$y": true, "a1.b2": true,
		"": false, "../A": false, "A..B": false, "A.": false, ".A": false, "1A": false, "a-b": false, "a b": false,
		"a\nb": false, "a\u200bb": false, "a/b": false, strings.Repeat("a", 256): true, strings.Repeat("a", 257): false,
		strings.Repeat("𝒜", 128): true, strings.Repeat("𝒜", 129): false, "\xff": false,
	} {
		if got := ValidClassName(name); got != want {
			t.Errorf("ValidClassName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestValidTokenAndSHA(t *testing.T) {
	t.Parallel()
	for tok, want := range map[string]bool{
		"a": true, "fixture-owner": true, "A_9-z": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "a/b": false, "a b": false, "ö": false, "bad\nBUILD ok": false,
	} {
		if got := ValidToken(tok); got != want {
			t.Errorf("ValidToken(%q) = %v, want %v", tok, got, want)
		}
	}
	if !ValidSHA256(sha) || ValidSHA256(strings.ToUpper(sha)) || ValidSHA256(sha[:63]) || ValidSHA256(sha+"0") {
		t.Error("ValidSHA256 accepts or rejects the wrong strings")
	}
	if tok := NewToken(); len(tok) != 36 || !ValidToken(tok) || tok == NewToken() {
		t.Errorf("NewToken() = %q", tok)
	}
}

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	for line, ok := range map[string]bool{
		"SCAN": true, strings.Repeat("x", 512): true, strings.Repeat("x", 513): false,
		strings.Repeat("𝒜", 256): true, strings.Repeat("𝒜", 256) + "x": false,
		"A\nB": false, "A\rB": false, "A\u0085": false, "A\x7f": false, "A\tB": false,
	} {
		if err := CheckCommand(line); (err == nil) != ok {
			t.Errorf("CheckCommand(%.20q) = %v, want ok=%v", line, err, ok)
		}
	}
}
