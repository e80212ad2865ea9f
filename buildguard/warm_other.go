//go:build !linux

package buildguard

// warmStart has nothing to do ahead of a first child start here.
func warmStart() {}
