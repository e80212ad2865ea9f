package buildqueue

import (
	"regexp"
	"strconv"
	"testing"
)

// The patterns the queue's names follow (docs/safe-build.md#4): what
// ticketSeq, resultSeq and groupPGID read, as regular expressions.
var (
	ticketPattern = regexp.MustCompile(`^t-([1-9][0-9]{0,17})$`)
	resultPattern = regexp.MustCompile(`^r-([1-9][0-9]{0,17})(\.tmp)?$`)
	groupPattern  = regexp.MustCompile(`^g-([0-9]{1,10})$`)
)

var nameSeeds = []string{
	"", "t", "t-", "t-0", "t-1", "t-7", "t-007", "t-0999", "t-10", "t-999999999999999999",
	"t-1000000000000000000", "t-9999999999999999999", "t-1a", "t--1", "t-+1", "t- 1", "t-1 ",
	"T-1", "tt-1", "r-1", "r-1.tmp", "r-1.tmp.tmp", "r-.tmp", "r-0.tmp", "r-01", "r-1.TMP",
	"r-999999999999999999.tmp", "r-1000000000000000000.tmp", "r-1tmp", "r-1.tm",
	"g-", "g-0", "g-1", "g-0001", "g-4242", "g-1234567890", "g-12345678901", "g-9999999999",
	"g-1x", "g--1", "procs", "lock", "next", "t-١", "g-١",
}

// checkNames fails t when the hand-written readers disagree with the
// patterns on name.
func checkNames(t *testing.T, name string) {
	m := ticketPattern.FindStringSubmatch(name)
	seq, ok := ticketSeq(name)
	if ok != (m != nil) || (ok && strconv.FormatInt(seq, 10) != m[1]) {
		t.Errorf("ticketSeq(%q) = %d, %v; the pattern says %q", name, seq, ok, m)
	}
	m = resultPattern.FindStringSubmatch(name)
	seq, tmp, ok := resultSeq(name)
	if ok != (m != nil) || (ok && (strconv.FormatInt(seq, 10) != m[1] || tmp != (m[2] != ""))) {
		t.Errorf("resultSeq(%q) = %d, %v, %v; the pattern says %q", name, seq, tmp, ok, m)
	}
	m = groupPattern.FindStringSubmatch(name)
	pgid, ok := groupPGID(name)
	want := 0
	if m != nil {
		want, _ = strconv.Atoi(m[1])
	}
	if ok != (m != nil) || pgid != want {
		t.Errorf("groupPGID(%q) = %d, %v; the pattern says %q", name, pgid, ok, m)
	}
}

// TestQueueNames: the names of tickets, results and nested builds' records
// are read as their patterns say, without compiling them in the product.
func TestQueueNames(t *testing.T) {
	for _, name := range nameSeeds {
		checkNames(t, name)
	}
}

func FuzzQueueNames(f *testing.F) {
	for _, name := range nameSeeds {
		f.Add(name)
	}
	f.Fuzz(checkNames)
}
