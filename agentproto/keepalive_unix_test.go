//go:build unix

package agentproto

import (
	"net"
	"syscall"
	"testing"
)

// The agent is local: Dial leaves TCP keep-alive off rather than paying for
// its probes' setup on every connection.
func TestDialLeavesKeepAliveOff(t *testing.T) {
	t.Parallel()
	port := serve(t, func(p *peer) { p.line(connected); p.command() })
	c := dial(t, port)
	defer c.Close()
	raw, err := c.nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var on int
	var serr error
	if err := raw.Control(func(fd uintptr) {
		on, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	if on != 0 {
		t.Errorf("SO_KEEPALIVE = %d, want 0", on)
	}
}
