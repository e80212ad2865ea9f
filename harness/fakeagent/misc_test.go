package fakeagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"time"
)

func dialOnce(addr string) (net.Conn, error) { return net.DialTimeout("tcp", addr, time.Second) }

func listenProbe(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
