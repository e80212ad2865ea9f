// Package wrapfloor is the work of the wrapper floor: it reads the agent's
// port from the file named by its first argument, dials 127.0.0.1, reads the
// handshake line, sends BUILD started and awaits its BUILD_ACK, runs the
// command that follows with the same stdio, then sends BUILD ok and awaits
// its BUILD_ACK (docs/performance.md#1). No checks beyond that: the floor
// of the work, not of the guarantees. Two programs run it: wrap, which links
// nothing else, and wrapsdk, which also links go-sdk as buildguard does.
package wrapfloor

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Main runs the floor on os.Args and exits on a failure.
func Main() {
	if len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, "usage: %s PORT-FILE COMMAND [ARG...]\n", filepath.Base(os.Args[0]))
		os.Exit(2)
	}
	port, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strings.TrimSpace(string(port))))
	if err != nil {
		fail(err)
	}
	defer conn.Close()
	lines := bufio.NewReader(conn)
	if _, err := lines.ReadString('\n'); err != nil {
		fail(err)
	}
	build := func(state string) {
		if _, err := fmt.Fprintf(conn, "BUILD %s request=floor owner=floor\n", state); err != nil {
			fail(err)
		}
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				fail(err)
			}
			if strings.Contains(line, `"BUILD_ACK floor `+state) { // the reply is the message of a JSON line
				return
			}
		}
	}
	build("started")
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fail(err)
	}
	build("ok")
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
	os.Exit(1)
}
