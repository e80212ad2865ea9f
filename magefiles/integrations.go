//go:build mage

package main

import (
	"os/exec"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"
)

// Integrations checks the POSIX shims with shellcheck and runs the integration
// tests (real Gradle 4.4.1 and Maven 3.8.7, fake buildguard).
func Integrations() error {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		return mg.Fatalf(1, "shellcheck is not installed; install it with: apt-get install -y shellcheck")
	}
	if err := sh.RunV("shellcheck", "-s", "sh", "integrations/bin/buildguard-gradle", "integrations/bin/buildguard-mvn"); err != nil {
		return err
	}
	return sh.RunV("go", "test", "-count=1", "./integrations/...")
}
