//go:build mage

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/buildguard/buildguard/harness/refagent"
)

// Refagent builds the reference JVM agent jar (test/demo agent, not Reclazz) into bin/refagent/.
func Refagent(ctx context.Context) error {
	jar, err := refagent.Build(ctx, "bin/refagent")
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "built", jar)
	return nil
}
