package agentproto

import (
	"strings"
	"testing"
)

// TestErrorsNameNoFrontsSetting: the wire's failure reasons name no
// setting the way one front's users give it — no tool argument, no flag —
// so that each front adds its own words for what to do
// (docs/decisions.md#D2).
func TestErrorsNameNoFrontsSetting(t *testing.T) {
	t.Parallel()
	for _, err := range []error{ErrNoPortFile, ErrUnreadablePortFile, ErrInvalidPort, ErrUnreachable,
		ErrNoHandshake, ErrInvalidHandshake, ErrInvalidCommand, ErrInvalidResponse, ErrTooLong,
		ErrDisconnected, ErrTimeout, ErrNoInfo, ErrIO, ErrRejected, ErrNoOwner, ErrProjectNotConfirmed} {
		for _, word := range []string{"portFile", "projectDir", "timeoutMs", "hybrisHome", "port/", "--"} {
			if strings.Contains(err.Error(), word) {
				t.Errorf("%q names a front's setting: %s", err, word)
			}
		}
	}
}
