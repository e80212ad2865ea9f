package agentproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// The DOCTOR statuses.
const (
	DoctorObserved    = "observed"
	DoctorUnavailable = "unavailable"
)

// Bounds of DOCTOR evidence (docs/agent-protocol.md#7).
const (
	maxDoctorString  = 512
	maxWatchedSample = 8
	maxWatchedPath   = 256
)

// Doctor is validated DOCTOR evidence: a point-in-time description of the
// agent's JVM, session, watches and capabilities. It proves no reload.
type Doctor struct {
	RequestID string
	// Status is DoctorObserved, or DoctorUnavailable when the agent could not
	// give bounded evidence (then only RequestID, Status and Detail are set).
	Status           string
	Detail           string
	SessionID        string
	AgentVersion     string
	PID              string
	JavaVersion      string
	VMName           string
	WorkingDirectory string
	// WatcherState is starting, watching, stopped or unavailable.
	WatcherState string
	// BuildHold is none, named, legacy or unavailable.
	BuildHold                 string
	WatchedDirectoryCount     int
	UnwatchableDirectoryCount int
	WatchSampleTruncated      bool
	WatchedDirectories        []string
	BuildOwnershipSupported   bool
	VerifySupported           bool
	ScanSupported             bool
	// Raw is the agent's object as received (extra fields included); for
	// unavailable evidence, only requestId, status and detail.
	Raw Object
}

// validPID reports whether s matches [1-9][0-9]*.
func validPID(s string) bool {
	return s != "" && s[0] != '0' && allDigits(s)
}

// validCount reports whether the JSON number text raw matches [0-9]{1,9}.
func validCount(raw []byte) bool {
	return len(raw) >= 1 && len(raw) <= 9 && allDigits(string(raw))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func parseDoctor(token, payload string) (*Doctor, error) {
	d, err := decodeDoctor(token, payload)
	if err != nil {
		return nil, &wireError{msg: ErrInvalidResponse.Error(), errs: []error{ErrInvalidResponse, fmt.Errorf("DOCTOR_RESULT: %w", err)}}
	}
	return d, nil
}

// decodeDoctor checks a DOCTOR_RESULT payload field by field
// (docs/agent-protocol.md#7): the correlation and status first, then, for an
// observed result, its strings, flags, counts and watched directories.
func decodeDoctor(token, payload string) (*Doctor, error) {
	obj, err := ParseObject([]byte(payload))
	if err != nil {
		return nil, err
	}
	r := doctorReader{obj}
	d := &Doctor{}
	if d.RequestID, err = r.str("requestId"); err != nil {
		return nil, err
	}
	if d.RequestID != token {
		return nil, errors.New("uncorrelated requestId")
	}
	if d.Status, err = r.str("status"); err != nil {
		return nil, err
	}
	if d.Detail, err = r.str("detail"); err != nil {
		return nil, err
	}
	switch d.Status {
	case DoctorUnavailable:
		d.Raw = Object{}
		for _, k := range []string{"requestId", "status", "detail"} {
			v, _ := obj.Get(k)
			d.Raw = d.Raw.Set(k, v)
		}
		return d, nil
	case DoctorObserved:
	default:
		return nil, fmt.Errorf("unknown status %q", d.Status)
	}
	for _, step := range []func(*Doctor) error{r.strings, r.flags, r.counts, r.watched} {
		if err := step(d); err != nil {
			return nil, err
		}
	}
	d.Raw = obj
	return d, nil
}

// doctorReader reads the fields of one DOCTOR_RESULT object.
type doctorReader struct{ obj Object }

// str reads a string of at most maxDoctorString UTF-16 units.
func (r doctorReader) str(key string) (string, error) {
	s, ok := r.obj.String(key)
	if !ok {
		return "", fmt.Errorf("%q is not a string", key)
	}
	if UTF16Len(s) > maxDoctorString {
		return "", fmt.Errorf("%q exceeds %d characters", key, maxDoctorString)
	}
	return s, nil
}

// strings reads the observed result's strings and checks the enumerated ones.
func (r doctorReader) strings(d *Doctor) error {
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"sessionId", &d.SessionID}, {"agentVersion", &d.AgentVersion}, {"pid", &d.PID},
		{"javaVersion", &d.JavaVersion}, {"vmName", &d.VMName}, {"workingDirectory", &d.WorkingDirectory},
		{"watcherState", &d.WatcherState}, {"buildHold", &d.BuildHold},
	} {
		var err error
		if *f.dst, err = r.str(f.key); err != nil {
			return err
		}
	}
	if !validPID(d.PID) {
		return fmt.Errorf("pid %q is not a positive decimal", d.PID)
	}
	if !oneOf(d.WatcherState, "starting", "watching", "stopped", "unavailable") {
		return fmt.Errorf("unknown watcherState %q", d.WatcherState)
	}
	if !oneOf(d.BuildHold, "none", "named", "legacy", "unavailable") {
		return fmt.Errorf("unknown buildHold %q", d.BuildHold)
	}
	return nil
}

// flags reads the observed result's booleans; reloadConfirmed must be false
// and verification needs a session.
func (r doctorReader) flags(d *Doctor) error {
	var reloadConfirmed bool
	for _, f := range []struct {
		key string
		dst *bool
	}{
		{"watchSampleTruncated", &d.WatchSampleTruncated}, {"buildOwnershipSupported", &d.BuildOwnershipSupported},
		{"verifySupported", &d.VerifySupported}, {"scanSupported", &d.ScanSupported}, {"reloadConfirmed", &reloadConfirmed},
	} {
		v, ok := r.obj.Bool(f.key)
		if !ok {
			return fmt.Errorf("%q is not a boolean", f.key)
		}
		*f.dst = v
	}
	if reloadConfirmed {
		return errors.New("reloadConfirmed must be false")
	}
	if d.VerifySupported && IsBlank(d.SessionID) {
		return errors.New("verifySupported with a blank sessionId")
	}
	return nil
}

// counts reads the observed result's directory counts.
func (r doctorReader) counts(d *Doctor) error {
	for _, f := range []struct {
		key string
		dst *int
	}{
		{"watchedDirectoryCount", &d.WatchedDirectoryCount}, {"unwatchableDirectoryCount", &d.UnwatchableDirectoryCount},
	} {
		raw, _ := r.obj.Get(f.key)
		if !validCount(raw) {
			return fmt.Errorf("%q is not a count", f.key)
		}
		*f.dst, _ = strconv.Atoi(string(raw))
	}
	return nil
}

// watched reads the sample of watched directories and checks it against the
// count and the truncation flag.
func (r doctorReader) watched(d *Doctor) error {
	raw, _ := r.obj.Get("watchedDirectories")
	if err := json.Unmarshal(raw, &d.WatchedDirectories); err != nil || len(raw) == 0 || raw[0] != '[' {
		return errors.New(`"watchedDirectories" is not an array of strings`)
	}
	if len(d.WatchedDirectories) > maxWatchedSample {
		return fmt.Errorf("more than %d watched directories in the sample", maxWatchedSample)
	}
	for _, p := range d.WatchedDirectories {
		if IsBlank(p) || UTF16Len(p) > maxWatchedPath {
			return errors.New("a watched directory is blank or too long")
		}
	}
	sample := len(d.WatchedDirectories)
	if d.WatchedDirectoryCount < sample || (d.WatchedDirectoryCount > sample) != d.WatchSampleTruncated {
		return errors.New("watchedDirectoryCount, sample and watchSampleTruncated disagree")
	}
	return nil
}

func oneOf(s string, set ...string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}
