package mcp

import (
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/buildguard/buildguard/mcp/httpfront"
	"github.com/buildguard/buildguard/mcp/protocol"
	"github.com/buildguard/buildguard/service/mcptask"
)

// The 2025-11-25 form of tasks (SEP-1686, docs/decisions.md#D17): a session
// that negotiated 2025-11-25 sees the tasks capability in initialize and
// reclazz_safe_build's execution.taskSupport in tools/list, and its tasks
// are its own.

// httpOwner owns the 2025-11-25 tasks created over HTTP with one session
// id (the Mcp-Session-Id the front gave at initialize); the requests
// without one share the owner of session "" (docs/decisions.md#D17).
type httpOwner struct{ session string }

// session2025 is mcptask.SessionOf: a request of a 2025-11-25 session (not
// a 2026-07-28 request), whose tasks belong to its stdio session, or over
// HTTP to its session id.
func (s *Server) session2025(req sdkmcp.Request) (any, bool) {
	if s.requestVersion(req) != protocol.Version20251125 {
		return nil, false
	}
	if httpfront.FromHTTP(req) {
		return httpOwner{session: s.httpCalls.Session(req)}, true
	}
	ss := serverSession(req)
	if ss == nil {
		return nil, false
	}
	return ss, true
}

// wireExecution is a tools/list entry's execution (2025-11-25).
type wireExecution struct {
	TaskSupport string `json:"taskSupport"`
}

// execution2025 is the execution of tool name in a tools/list of version v:
// taskSupport optional for reclazz_safe_build in a 2025-11-25 session, and
// nothing for every other tool and version.
func execution2025(name, v string) *wireExecution {
	if v != protocol.Version20251125 || taskPolicy(&sdkmcp.CallToolParamsRaw{Name: name}) != mcptask.SupportOptional {
		return nil
	}
	return &wireExecution{TaskSupport: "optional"}
}

// capabilities2025 are the server capabilities with SEP-1686's tasks.
type capabilities2025 struct {
	*sdkmcp.ServerCapabilities
	Tasks map[string]any `json:"tasks"`
}

// initializeResult2025 is the initialize result of a 2025-11-25 session,
// capabilities.tasks included.
type initializeResult2025 struct {
	sdkmcp.ResultBase
	Capabilities    capabilities2025       `json:"capabilities"`
	Instructions    string                 `json:"instructions,omitempty"`
	ProtocolVersion string                 `json:"protocolVersion"`
	ServerInfo      *sdkmcp.Implementation `json:"serverInfo"`
}

func (s *Server) initializeResult2025() *initializeResult2025 {
	return &initializeResult2025{
		Capabilities:    capabilities2025{ServerCapabilities: capabilities(), Tasks: mcptask.Capability2025()},
		Instructions:    Instructions,
		ProtocolVersion: protocol.Version20251125,
		ServerInfo:      &sdkmcp.Implementation{Name: ServerName, Version: s.version},
	}
}
