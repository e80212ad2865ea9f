package agentproto

import "testing"

func TestUTF16Lengths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"abc", 3}, {"€", 1}, {"𝒜", 2}, {"a𝒜b", 4}, {"\xff", 1}, {"\xed\xa0\x80", 3}} {
		if got := UTF16Len(tc.s); got != tc.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tc.s, got, tc.want)
		}
		if got := UTF16LenBytes([]byte(tc.s)); got != tc.want {
			t.Errorf("UTF16LenBytes(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

// CutUTF16 cuts as Java's substring(0, n) does, and says when that would
// split a surrogate pair.
func TestCutUTF16(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s      string
		n      int
		prefix string
		split  bool
	}{
		{"abc", 5, "abc", false},
		{"abc", 2, "ab", false},
		{"ab𝒜c", 3, "ab", true},
		{"ab𝒜c", 4, "ab𝒜", false},
		{"𝒜", 0, "", false},
		{"𝒜", 1, "", true},
		{"é€", 1, "é", false},
	} {
		prefix, split := CutUTF16(tc.s, tc.n)
		if prefix != tc.prefix || split != tc.split {
			t.Errorf("CutUTF16(%q, %d) = %q, %v; want %q, %v", tc.s, tc.n, prefix, split, tc.prefix, tc.split)
		}
	}
}
