//go:build mage

// Mage targets for buildguard. Run them with `go tool mage <target>`; list them
// with `go tool mage -l`. Product code never imports this package.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"
)

// fuzzTime is how many inputs `mage test` tries per fuzz target beyond its
// seed corpus. A count, not a duration: a duration that runs out while the
// engine minimises a new input can end the run with "context deadline
// exceeded", which is no finding.
const fuzzTime = "10000x"

// Test runs go vet (also for windows and darwin), the whole test suite under the race detector, and each fuzz target briefly.
func Test() error {
	if err := vet(); err != nil {
		return err
	}
	if err := sh.RunV("go", "test", "-race", "-count=1", "./..."); err != nil {
		return err
	}
	return Fuzz()
}

// Fuzz runs every fuzz target for a short time (FUZZTIME overrides the default 10000x; a duration such as 30s works too).
func Fuzz() error {
	d := os.Getenv("FUZZTIME")
	if d == "" {
		d = fuzzTime
	}
	out, err := sh.Output("go", "test", "-list", "^Fuzz", "./...")
	if err != nil {
		return err
	}
	// go test -list prints the names, then "ok  <package> …" for each package.
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Fuzz"):
			names = append(names, line)
		case strings.HasPrefix(line, "ok "):
			fields := strings.Fields(line)
			for _, n := range names {
				fmt.Printf("fuzz %s %s for %s\n", fields[1], n, d)
				var out bytes.Buffer
				if _, err := sh.Exec(nil, &out, &out, "go", "test", "-run", "^$", "-fuzz", "^"+n+"$", "-fuzztime", d, "-fuzzminimizetime", "10s", fields[1]); err != nil {
					os.Stdout.Write(out.Bytes())
					return err
				}
			}
			names = nil
		}
	}
	return sc.Err()
}

// Lint checks formatting, vet and staticcheck (also for windows and darwin), that go.mod/go.sum are tidy, and that no import points upward (internal/repocheck/importcheck).
func Lint() error {
	out, err := sh.Output("gofmt", "-l", ".")
	if err != nil {
		return err
	}
	if out != "" {
		return mg.Fatalf(1, "gofmt would change:\n%s", out)
	}
	if err := vet(); err != nil {
		return err
	}
	if err := staticcheck(); err != nil {
		return err
	}
	if err := sh.RunV("go", "mod", "tidy", "-diff"); err != nil {
		return err
	}
	return sh.RunV("go", "test", "-count=1", "-run", "^TestRepository$", "./internal/repocheck/importcheck")
}

// staticcheck runs the staticcheck tool of go.mod for this machine with every
// default check, and for windows and darwin without U1000: unused code is
// judged where the unix-only files that use it compile.
func staticcheck() error {
	// `go tool` would build the tool for GOOS; build it for this machine once
	// and run that binary for each target system.
	bin, err := sh.Output("go", "tool", "-n", "staticcheck")
	if err != nil {
		return fmt.Errorf("building staticcheck: %w", err)
	}
	if err := sh.RunV(bin, "./..."); err != nil {
		return err
	}
	for _, goos := range []string{"windows", "darwin"} {
		if err := sh.RunWithV(map[string]string{"GOOS": goos}, bin, "-checks", "inherit,-U1000", "./..."); err != nil {
			return fmt.Errorf("staticcheck for %s: %w", goos, err)
		}
	}
	return nil
}

// vet runs go vet for this machine and for the other systems the release
// targets, whose files (and test files) are otherwise never compiled here.
func vet() error {
	if err := sh.RunV("go", "vet", "./..."); err != nil {
		return err
	}
	for _, goos := range []string{"windows", "darwin"} {
		if err := sh.RunWithV(map[string]string{"GOOS": goos}, "go", "vet", "./..."); err != nil {
			return fmt.Errorf("go vet for %s: %w", goos, err)
		}
	}
	return nil
}
