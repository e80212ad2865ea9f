package buildguard

import (
	"errors"
	"strings"

	"github.com/buildguard/buildguard/agentproto"
)

// Advice is one front's words for each Fix: what its users do next, in the
// names they give the settings (flags, tool arguments). A Fix it has no
// words for gets none (docs/decisions.md#D2).
type Advice map[Fix]string

// Word returns err's text for a user of the front: each error of this
// package that err is made of, and each error of the wire that needs a
// setting, followed by the front's words for its Fix — a refusal's between
// its problem and what became of the hold (RefusalError.Word) — and
// anything else as it is. It walks err's structure, never its text: an
// error of this package wrapped by another package's error keeps its text
// as it is.
func (a Advice) Word(err error) string {
	switch e := err.(type) {
	case *RefusalError:
		return e.word(a.Word(e.Problem), a[e.Fix])
	case *InterruptedError:
		if e.Err == nil {
			return e.what()
		}
		return e.what() + ": " + a.Word(e.Err)
	case *UnconfirmedError:
		return a.follow(e.Error(), ": ", FixRerun)
	case *AbandonedError:
		return a.follow(e.Error(), ": ", FixRelease)
	case *joinError:
		parts := make([]string, len(e.errs))
		for i, err := range e.errs {
			parts[i] = a.Word(err)
		}
		return strings.Join(parts, e.sep)
	}
	// A wire error's text ends with its sentinel's, which the front's
	// words follow.
	switch {
	case errors.Is(err, agentproto.ErrNoPortFile):
		return a.follow(err.Error(), "; ", FixFindAgent)
	case errors.Is(err, agentproto.ErrProjectNotConfirmed):
		return a.follow(err.Error(), " ", FixConfirmProject)
	}
	return err.Error()
}

// follow is text followed by sep and the front's words for fix; text alone
// when the front has none.
func (a Advice) follow(text, sep string, fix Fix) string {
	if w := a[fix]; w != "" {
		return text + sep + w
	}
	return text
}

// joinError is errors made one, as errors.Join makes them but with its own
// separator, so that Advice.Word words each of them: its text is theirs
// joined by sep. join leaves out nil errors and returns nil when none is
// left.
type joinError struct {
	sep  string
	errs []error
}

func join(sep string, errs ...error) error {
	e := &joinError{sep: sep}
	for _, err := range errs {
		if err != nil {
			e.errs = append(e.errs, err)
		}
	}
	if len(e.errs) == 0 {
		return nil
	}
	return e
}

func (e *joinError) Error() string {
	parts := make([]string, len(e.errs))
	for i, err := range e.errs {
		parts[i] = err.Error()
	}
	return strings.Join(parts, e.sep)
}

func (e *joinError) Unwrap() []error { return e.errs }
