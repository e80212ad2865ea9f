//go:build mage

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/buildguard/buildguard/harness/release"
)

// Release cross-compiles dist/buildguard-<version>-<os>-<arch>[.exe] with .sha256 sidecars (VERSION env or git describe).
func Release(ctx context.Context) error {
	v := os.Getenv("VERSION")
	if v == "" {
		v = release.DescribeVersion(ctx, ".")
	}
	arts, err := release.Build(ctx, release.Config{Version: v, OutDir: "dist"})
	for _, a := range arts {
		fmt.Printf("%s  %s\n", a.SHA256, a.Path)
	}
	return err
}
