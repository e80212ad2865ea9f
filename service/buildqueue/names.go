package buildqueue

import (
	"strconv"
	"strings"
)

// The names of the queue's numbered files are read by hand, not by
// regular expressions: compiling those would cost a build 0.1-0.2 ms of
// its turn in a fresh process (the wrapper's start, docs/performance.md#4).

// ticketSeq returns the number of a ticket's name, t- and a number from 1
// to maxTicketSeq as strconv writes it (t-007 is not the name of ticket 7,
// nor anything of the queue's).
func ticketSeq(name string) (int64, bool) {
	return seqAfter(name, "t-")
}

// resultSeq returns the number of a result's name, r- and a number as for
// a ticket, and reports whether it names the result's temporary file (the
// name ends in .tmp).
func resultSeq(name string) (seq int64, tmp, ok bool) {
	if n := len(name) - len(".tmp"); n > 0 && name[n:] == ".tmp" {
		seq, ok = seqAfter(name[:n], "r-")
		return seq, true, ok
	}
	seq, ok = seqAfter(name, "r-")
	return seq, false, ok
}

// seqAfter returns the number that follows prefix in name: 1 to 18 digits,
// the first not 0.
func seqAfter(name, prefix string) (int64, bool) {
	digits, ok := digitsAfter(name, prefix, 18)
	if !ok || digits[0] == '0' {
		return 0, false
	}
	seq, err := strconv.ParseInt(digits, 10, 64)
	return seq, err == nil
}

// groupPGID returns the process group of a nested build's record name,
// groupPrefix and 1 to 10 digits.
func groupPGID(name string) (int, bool) {
	digits, ok := digitsAfter(name, groupPrefix, 10)
	if !ok {
		return 0, false
	}
	pgid, err := strconv.Atoi(digits)
	return pgid, err == nil
}

// digitsAfter returns what follows prefix in name when that is 1 to most
// ASCII digits.
func digitsAfter(name, prefix string, most int) (string, bool) {
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok || digits == "" || len(digits) > most {
		return "", false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return "", false
		}
	}
	return digits, true
}
