package agentproto

import (
	"errors"
)

// The event levels of protocol 1 (docs/agent-protocol.md#2.2).
const (
	LevelConnected        = "CONNECTED"
	LevelHeartbeat        = "HEARTBEAT"
	LevelInfo             = "INFO"
	LevelOK               = "OK"
	LevelWarn             = "WARN"
	LevelError            = "ERROR"
	LevelReload           = "RELOAD"
	LevelStructuralReload = "STRUCTURAL_RELOAD"
	LevelCompile          = "COMPILE"
)

// ProtocolVersion is the status-socket protocol version this client speaks.
const ProtocolVersion = 1

// Event is one agent line. Unknown fields are ignored.
type Event struct {
	// Level is one of the Level constants ("" when the line had none).
	Level string
	// Message is the text; HasMessage is false when the field was missing or
	// not a string.
	Message    string
	HasMessage bool
}

// ParseEvent decodes one agent line, which must be a JSON object.
func ParseEvent(line []byte) (Event, error) {
	obj, err := ParseObject(line)
	if err != nil {
		return Event{}, err
	}
	var ev Event
	ev.Level, _ = obj.String("level")
	ev.Message, ev.HasMessage = obj.String("message")
	return ev, nil
}

// parseHandshake applies the strict CONNECTED rule and returns the agent's
// release string.
func parseHandshake(line []byte) (string, error) {
	obj, err := ParseObject(line)
	if err != nil {
		return "", err
	}
	if level, _ := obj.String("level"); level != LevelConnected {
		return "", errors.New("first line is not a CONNECTED event")
	}
	agent, ok := obj.String("agent")
	if !ok || IsBlank(agent) {
		return "", errors.New(`"agent" is not a non-blank string`)
	}
	if v, _ := obj.Get("version"); string(v) != "1" {
		return "", errors.New(`"version" is not the JSON number 1`)
	}
	return agent, nil
}
