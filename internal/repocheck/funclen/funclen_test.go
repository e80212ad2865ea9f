package funclen

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// TestRepository: no product function is longer than Max lines without a
// reason in its doc comment.
func TestRepository(t *testing.T) {
	t.Parallel()
	problems, err := Check(os.DirFS("../../.."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheck: a long product function fails unless its comment says why;
// short ones, tests, the proof and the helpers are not product code.
func TestCheck(t *testing.T) {
	t.Parallel()
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n-2) }
	long := "func Long() {\n" + body(81) + "}\n"
	fsys := fstest.MapFS{
		"p/long.go":                    {Data: []byte("package p\n\n" + long)},
		"p/method.go":                  {Data: []byte("package p\n\ntype T struct{}\n\nfunc (t *T) Run() {\n" + body(90) + "}\n")},
		"p/reason.go":                  {Data: []byte("package p\n\n// Why is longer than 80 lines because it is one table.\nfunc Why() {\n" + body(100) + "}\n")},
		"p/short.go":                   {Data: []byte("package p\n\nfunc Short() {\n" + body(80) + "}\n")},
		"p/x_test.go":                  {Data: []byte("package p\n\n" + long)},
		"harness/h.go":                 {Data: []byte("package h\n\n" + long)},
		"internal/testsupport/w/w.go":  {Data: []byte("package w\n\n" + long)},
		"service/tools/toolstest/s.go": {Data: []byte("package s\n\n" + long)},
		"p/testdata/x.go":              {Data: []byte("package x\n\n" + long)},
	}
	got, err := Check(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p/long.go:3: Long is 81 lines: split it, or say in its doc comment why it is longer than 80 lines because …",
		"p/method.go:5: T.Run is 90 lines: split it, or say in its doc comment why it is longer than 80 lines because …",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check (-want +got):\n%s", diff)
	}
}
