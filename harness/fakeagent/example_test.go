package fakeagent_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"

	"github.com/buildguard/buildguard/harness/fakeagent"
)

// Start runs the fake agent outside a test; NewServer(t) does the same and
// closes it in t.Cleanup.
func Example() {
	s, err := fakeagent.Start(fakeagent.Config{Heartbeat: -1, Hold: fakeagent.InitialHold{Holding: true, Owner: "other"}})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	br.ReadString('\n') // CONNECTED
	fmt.Fprintf(nc, "BUILD started request=r1 owner=me\n")
	line, _ := br.ReadString('\n')
	fmt.Println(strings.Contains(line, `"message":"BUILD_REJECTED r1 started owner=me"`))
	fmt.Println(s.Commands())
	fmt.Println(s.Hold())
	// Output:
	// true
	// [BUILD started request=r1 owner=me]
	// true other
}
