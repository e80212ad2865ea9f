//go:build mage

// Mage targets for buildguard. Run them with `go tool mage <target>`; list them
// with `go tool mage -l`. Product code never imports this package.
package main

import (
	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"
)

// Test runs go vet and the whole test suite under the race detector.
func Test() error {
	if err := sh.RunV("go", "vet", "./..."); err != nil {
		return err
	}
	return sh.RunV("go", "test", "-race", "-count=1", "./...")
}

// Lint checks formatting, vet and that go.mod/go.sum are tidy.
func Lint() error {
	out, err := sh.Output("gofmt", "-l", ".")
	if err != nil {
		return err
	}
	if out != "" {
		return mg.Fatalf(1, "gofmt would change:\n%s", out)
	}
	if err := sh.RunV("go", "vet", "./..."); err != nil {
		return err
	}
	return sh.RunV("go", "mod", "tidy", "-diff")
}
