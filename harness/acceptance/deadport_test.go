//go:build unix

package acceptance

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestDeadPortRefusesConnections(t *testing.T) {
	t.Parallel()
	d, err := reserveDeadPort()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(d.Port()))
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("dialling the bound, not listening port %d connected", d.Port())
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial err = %v, want connection refused", err)
	}
	// Reserved: nobody else can listen on it while it is held.
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("listening on the reserved port %d succeeded", d.Port())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
