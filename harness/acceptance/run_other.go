//go:build !unix

package acceptance

import (
	"context"
	"errors"
)

// ErrUnsupportedOS: the proof needs Unix (process groups, per-file symlinks,
// a bound socket that does not listen).
var ErrUnsupportedOS = errors.New("the acceptance proof runs on Linux or macOS only")

// Run fails on this OS; see ErrUnsupportedOS.
func Run(ctx context.Context, c Config) (*Evidence, error) { return nil, ErrUnsupportedOS }
