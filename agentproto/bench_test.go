package agentproto_test

import (
	"bufio"
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/agentproto"
	"github.com/buildguard/buildguard/harness/fakeagent"
)

// BenchmarkVerifyRoundTrip measures one correlated VERIFY (fresh token, send,
// strict parse and validation of the receipt) next to a raw write-line /
// read-line round trip of the same command on another open socket to the same
// agent, alternating within each iteration so both see the same load. It
// reports the medians and their ratio (target: within 1.5×); `go tool mage
// bench` prints them.
func BenchmarkVerifyRoundTrip(b *testing.B) {
	const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	a := fakeagent.NewServer(b, fakeagent.WithHeartbeat(-1))
	a.SetReceipt("com.acme.A", fakeagent.Receipt{SHA256: sha, Source: "/p/A.class", Status: "applied", Detail: "Reloaded", CompletedAt: "2026-09-08T09:12:44.371Z"})

	nc, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(a.Port()))
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	// Nothing waits forever: the raw connection and the correlated one
	// fail after ten minutes, far beyond any run of this benchmark.
	if err := nc.SetDeadline(time.Now().Add(10 * time.Minute)); err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReader(nc)
	if _, err := br.ReadString('\n'); err != nil { // CONNECTED
		b.Fatal(err)
	}
	cmd := []byte("VERIFY bench com.acme.A " + sha + "\n")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := agentproto.Dial(ctx, a.Port())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	var raw, verify []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := nc.Write(cmd); err != nil {
			b.Fatal(err)
		}
		line, err := br.ReadString('\n')
		if err != nil || !strings.Contains(line, "VERIFY_RESULT bench ") {
			b.Fatalf("raw reply %q: %v", line, err)
		}
		raw = append(raw, float64(time.Since(start).Nanoseconds())/1000)

		start = time.Now()
		r, err := c.Verify(ctx, "com.acme.A", sha)
		if err != nil || r.Status != agentproto.ReceiptApplied {
			b.Fatalf("Verify = %+v, %v", r, err)
		}
		verify = append(verify, float64(time.Since(start).Nanoseconds())/1000)
	}
	slices.Sort(raw)
	slices.Sort(verify)
	m, d := verify[len(verify)/2], raw[len(raw)/2]
	b.ReportMetric(m, "verify-us")
	b.ReportMetric(d, "raw-us")
	b.ReportMetric(m/d, "ratio")
}
