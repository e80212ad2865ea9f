package agentproto

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// ReloadState is the agent's answer to RELOAD: a snapshot of automatic
// reload admission taken right after the action was applied.
type ReloadState struct {
	// Action is the action the snapshot answers: pause, resume or status.
	Action string
	// Paused is the agent-wide manual pause switch.
	Paused bool
	// PendingClasses counts class files observed but not admitted.
	PendingClasses int
	// PendingActions counts pending automatic non-class work.
	PendingActions int
	// BuildHold is none, named or legacy (the owner is never disclosed).
	BuildHold string
}

// reloadStateRE is compiled on first use: the build wrapper never needs it.
var reloadStateRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^paused=(true|false) pendingClasses=([0-9]+) pendingActions=([0-9]+) buildHold=(none|named|legacy)$`)
})

// parseReloadState validates the remainder of a RELOAD_STATE message after
// "RELOAD_STATE <token> <action> ".
func parseReloadState(action, rest string) (*ReloadState, error) {
	invalid := func(why string) error {
		return &wireError{msg: ErrInvalidResponse.Error(), errs: []error{ErrInvalidResponse, fmt.Errorf("RELOAD_STATE %s", why)}}
	}
	m := reloadStateRE().FindStringSubmatch(rest)
	if m == nil {
		return nil, invalid("does not match the reply grammar")
	}
	classes, err1 := strconv.ParseInt(m[2], 10, 32)
	actions, err2 := strconv.ParseInt(m[3], 10, 32)
	if err1 != nil || err2 != nil {
		return nil, invalid("count out of range")
	}
	st := &ReloadState{Action: action, Paused: m[1] == "true", PendingClasses: int(classes), PendingActions: int(actions), BuildHold: m[4]}
	if action == ReloadPause && !st.Paused || action == ReloadResume && st.Paused {
		return nil, invalid(fmt.Sprintf("contradicts %s (paused=%t)", action, st.Paused))
	}
	return st, nil
}
