package agentproto

import (
	"errors"
	"net"
	"testing"
)

// refused recognises the error a refused connect really returns on this
// platform (on Windows that is WSAECONNREFUSED, not syscall.ECONNREFUSED),
// which is what makes Dial fall back to [::1] (docs/decisions.md#D6).
func TestRefusedMatchesARealRefusal(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = net.Dial("tcp4", addr)
	if err == nil {
		t.Fatalf("dialling the closed port %s succeeded; another process took it", addr)
	}
	if !refused(err) {
		t.Fatalf("refused(%v) = false for a refused connect", err)
	}
	if refused(errors.New("connection refused")) {
		t.Error("refused matched a plain error by its text")
	}
}
