package agenttest

import (
	"context"
	"net"
	"time"
)

func dialOnce(addr string) (net.Conn, error) { return net.DialTimeout("tcp", addr, time.Second) }

func listenProbe(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
