package jvm

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		line string
		a, b int
		ok   bool
	}{
		{"VALUES=1:1", 1, 1, true},
		{"VALUES=-3:12", -3, 12, true},
		{"VALUES=1:1 ", 0, 0, false},
		{"VALUES=1", 0, 0, false},
		{"values=1:1", 0, 0, false},
		{"VALUES=99999999999999999999:1", 0, 0, false},
	} {
		a, b, ok := ParseValues(tc.line)
		if a != tc.a || b != tc.b || ok != tc.ok {
			t.Errorf("ParseValues(%q) = %d, %d, %v; want %d, %d, %v", tc.line, a, b, ok, tc.a, tc.b, tc.ok)
		}
	}
}
