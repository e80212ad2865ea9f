//go:build unix

package hostlanes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Bounds of the installation.
const (
	// installTimeout bounds one npm install (hundreds of MB on a slow line).
	installTimeout = 10 * time.Minute
	// versionTimeout bounds `HOST --version` and `npm view`.
	versionTimeout = 60 * time.Second
)

// ErrNoNPM means npm is not installed or the registry does not answer: the
// lanes cannot run, and the caller says so.
var ErrNoNPM = errors.New("npm or its registry is not reachable")

// CheckRegistry asks the registry whether pkg@version exists and returns
// the version it names. An error wraps ErrNoNPM when npm or the registry is
// not there.
func CheckRegistry(ctx context.Context, pkg, version string) (string, error) {
	out, err := run(ctx, versionTimeout, "", nil, "npm", "view", pkg+"@"+version, "version")
	if err != nil {
		return "", fmt.Errorf("%w: npm view %s@%s: %v: %s", ErrNoNPM, pkg, version, err, out)
	}
	if out == "" {
		return "", fmt.Errorf("the registry has no %s@%s", pkg, version)
	}
	return out, nil
}

// Install installs h's pinned package into cache/<package>@<version> (npm
// install --prefix, no global install) unless it is there already, and
// returns the path of the host's command. The package's install scripts do
// not run; h.PostInstall, when set, is the one that does.
func Install(ctx context.Context, cache string, h Host) (string, error) {
	dir, err := filepath.Abs(filepath.Join(cache, strings.ReplaceAll(h.Package, "/", "+")+"@"+h.Version))
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "node_modules", ".bin", h.Command)
	if v, err := hostVersion(ctx, bin); err == nil && strings.Contains(v, h.Version) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the npm cache: %w", err)
	}
	if out, err := run(ctx, installTimeout, dir, nil, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund",
		"--ignore-scripts", "--no-save", h.Package+"@"+h.Version); err != nil {
		return "", fmt.Errorf("%w: installing %s@%s: %v: %s", ErrNoNPM, h.Package, h.Version, err, out)
	}
	if h.PostInstall != "" {
		script := filepath.Join(dir, "node_modules", filepath.FromSlash(h.Package), h.PostInstall)
		if out, err := run(ctx, versionTimeout, filepath.Dir(script), nil, "node", script); err != nil {
			return "", fmt.Errorf("running %s's %s: %v: %s", h.Package, h.PostInstall, err, out)
		}
	}
	v, err := hostVersion(ctx, bin)
	if err != nil {
		return "", fmt.Errorf("running %s --version after install: %w", h.Command, err)
	}
	if !strings.Contains(v, h.Version) {
		return "", fmt.Errorf("%s --version says %q, want %s", h.Command, v, h.Version)
	}
	return bin, nil
}

// hostVersion is `bin --version`, run with a private HOME.
func hostVersion(ctx context.Context, bin string) (string, error) {
	if _, err := os.Stat(bin); err != nil {
		return "", err
	}
	home, err := os.MkdirTemp("", "hostlanes-version-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	return run(ctx, versionTimeout, home, []string{"HOME=" + home}, bin, "--version")
}

// run runs a short command in its own process group, killing the group when
// it ends or the bound passes, and returns its combined output, trimmed.
func run(ctx context.Context, bound time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	group(cmd)
	err := cmd.Run()
	killGroup(cmd)
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%s did not end within %v: %w", name, bound, err)
	}
	return strings.TrimSpace(out.String()), err
}
