//go:build unix

package acceptance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildguard/buildguard/internal/testsupport/wait"
)

// fakeJava writes a script that stands in for java: it prints what the
// real App and agent print, starts a grandchild that records its pid, and
// then runs until killed (or exits at once when exitEarly).
func fakeJava(t *testing.T, dir string, exitEarly bool) string {
	t.Helper()
	body := `#!/bin/sh
echo "[agent] Watching 2 directories"
sleep 1000 &
echo $! > child.pid
while :; do echo "VALUES=1:1"; sleep 0.05; done
`
	if exitEarly {
		body = "#!/bin/sh\necho 'starting'\nexit 3\n"
	}
	path := filepath.Join(dir, "java")
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLiveAppReadinessAndStopKillsTheGroup(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	p := project{lane: LaneGradle, root: filepath.Join(base, "gradle project with spaces")}
	if err := os.Mkdir(p.root, 0o755); err != nil {
		t.Fatal(err)
	}
	app, err := startApp(fakeJava(t, base, false), "/agent.jar", p)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Stop()
	ctx := context.Background()
	for _, text := range []string{"VALUES=1:1", "] Watching "} {
		if err := app.waitFor(ctx, text); err != nil {
			t.Fatal(err)
		}
	}
	if !app.Running() {
		t.Fatal("the app is not running after readiness")
	}
	if ok, err := app.hasLinePrefix("VALUES=2:"); err != nil || ok {
		t.Errorf("hasLinePrefix(VALUES=2:) = %v, %v; want false", ok, err)
	}
	if ok, err := app.hasLinePrefix("VALUES=1:"); err != nil || !ok {
		t.Errorf("hasLinePrefix(VALUES=1:) = %v, %v; want true", ok, err)
	}
	child := wait.PIDFile(t, 10*time.Second, filepath.Join(p.root, "child.pid"))[0]
	if err := app.Stop(); err != nil {
		t.Fatal(err)
	}
	if app.Running() {
		t.Error("Running after Stop")
	}
	if left := wait.GoneWithin(5*time.Second, child); len(left) > 0 {
		t.Errorf("the app's child %d outlived Stop", child)
	}
	if err := app.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestLiveAppExitEndsTheWait(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	p := project{lane: LaneMaven, root: filepath.Join(base, "p")}
	if err := os.Mkdir(p.root, 0o755); err != nil {
		t.Fatal(err)
	}
	app, err := startApp(fakeJava(t, base, true), "/agent.jar", p)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Stop()
	err = app.waitFor(context.Background(), "VALUES=1:1")
	if !errors.Is(err, ErrAppExited) {
		t.Fatalf("err = %v, want ErrAppExited", err)
	}
	if !strings.Contains(err.Error(), "app.log") {
		t.Errorf("err %q does not name app.log", err)
	}
}
