package fakeagent

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadJavaRune checks the decoder against what a JDK 17
// InputStreamReader(UTF_8) reads from the same bytes (each expectation was
// checked with java).
func TestReadJavaRune(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ASCII", "plain ASCII"},
		{"é€😀", "é€😀"},
		{"z\xffz", "z\uFFFDz"},
		{"z\xe2\x82z", "z\uFFFDz"},                           // cut 3-byte sequence: one
		{"z\xf0\x9f\x98z", "z\uFFFDz"},                       // cut 4-byte sequence: one
		{"z\xed\xa0\x80z", "z\uFFFDz"},                       // encoded surrogate: one
		{"z\xc0\xafz", "z\uFFFD\uFFFDz"},                     // overlong 2-byte: lead and continuation
		{"z\xe0\x80\x80z", "z\uFFFD\uFFFD\uFFFDz"},           // overlong 3-byte: each byte
		{"z\xf0\x80\x80\x80z", "z\uFFFD\uFFFD\uFFFD\uFFFDz"}, // overlong 4-byte: each byte
		{"z\xf4\x90\x80\x80z", "z\uFFFD\uFFFD\uFFFD\uFFFDz"}, // above U+10FFFF
		{"z\xf5\x80z", "z\uFFFD\uFFFDz"},
		{"z\x80\xbfz", "z\uFFFD\uFFFDz"}, // stray continuations
		{"z\xe2\x41", "z\uFFFDA"},
		{"z\xe2\x82", "z\uFFFD"}, // cut at the end of input
		{"z\xf0\x9f", "z\uFFFD"},
	} {
		br := bufio.NewReader(strings.NewReader(tc.in))
		var got []rune
		for {
			r, err := readJavaRune(br)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		if diff := cmp.Diff([]rune(tc.want), got); diff != "" {
			t.Errorf("decoding %q (-want +got):\n%s", tc.in, diff)
		}
	}
}
