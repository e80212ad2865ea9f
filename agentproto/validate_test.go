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

// ParseJavaInt follows Integer.parseInt, which takes any BMP decimal digit
// (Character.digit), not only ASCII: "٥٠٠٠" is 5000 to the Java sidecar.
func TestParseJavaInt(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		"5000": 5000, "+100": 100, "007": 7, "-1": -1, "-0": 0,
		"2147483647": 2147483647, "-2147483648": -2147483648,
		"\u0665\u0660\u0660\u0660": 5000, // Arabic-Indic digits
		"\uff18\uff10\uff18\uff10": 8080, // fullwidth digits
		"+\u0967\u0966":            10,   // Devanagari digits after a sign
		"1\u0660":                  10,   // mixed scripts, as Java allows
	} {
		if got, ok := ParseJavaInt(s); !ok || got != want {
			t.Errorf("ParseJavaInt(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "+", "-", "+-1", "-+1", " 5", "5 ", "1.5", "1e3", "2147483648", "-2147483649",
		"\U0001D7CF", // MATHEMATICAL BOLD DIGIT ONE: a surrogate pair to Java, not a digit
		"\u00bd", "x1", "\u2167"} {
		if got, ok := ParseJavaInt(s); ok {
			t.Errorf("ParseJavaInt(%q) = %d, accepted", s, got)
		}
	}
}

// IsBlank and the port trimming follow Java's String.isBlank and trim(): a
// no-break space is not white space to either.
func TestJavaBlankAndTrim(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"": true, " ": true, "\t\n": true, "\u2003": true, "\u3000 ": true,
		"\u00a0": false, "\u2007": false, "\u202f": false, " a ": false,
	} {
		if got := IsBlank(s); got != want {
			t.Errorf("IsBlank(%q) = %v, want %v", s, got, want)
		}
	}
	if n, err := ParsePort(" 4000\u00a0"); err == nil || err.Error() != "invalid port:  4000\u00a0" {
		t.Errorf("ParsePort with a trailing no-break space = %d, %v; Java's trim() keeps it, so the parse fails", n, err)
	}
	if n, err := ParsePort("\x00 4000\t"); err != nil || n != 4000 {
		t.Errorf("ParsePort with a NUL and a tab around = %d, %v; Java's trim() strips every char <= U+0020", n, err)
	}
}
