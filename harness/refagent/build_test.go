package refagent_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/buildguard/buildguard/harness/refagent"
)

func TestBuildWritesAgentJar(t *testing.T) {
	t.Parallel()
	a, err := os.ReadFile(agentJar(t))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	if err != nil {
		t.Fatalf("jar is not a zip: %v", err)
	}
	if len(zr.File) < 2 || zr.File[0].Name != "META-INF/" || zr.File[1].Name != "META-INF/MANIFEST.MF" {
		t.Fatalf("jar must start with META-INF/ and the manifest, got %q", zr.File[0].Name)
	}
	rc, err := zr.File[1].Open()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Premain-Class: " + refagent.MainClass,
		"Agent-Class: " + refagent.MainClass,
		"Can-Redefine-Classes: true",
		"Implementation-Version: " + refagent.Release,
	} {
		if !strings.Contains(string(manifest), want+"\n") {
			t.Errorf("manifest lacks %q:\n%s", want, manifest)
		}
	}
	var hasMain bool
	for _, f := range zr.File {
		hasMain = hasMain || f.Name == strings.ReplaceAll(refagent.MainClass, ".", "/")+".class"
	}
	if !hasMain {
		t.Errorf("jar lacks the %s class", refagent.MainClass)
	}
}

func TestBuildWithoutJavacNamesTheInstallCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	out := t.TempDir()
	_, err := refagent.Build(context.Background(), out)
	if !errors.Is(err, refagent.ErrNoJavac) {
		t.Fatalf("Build without javac = %v, want ErrNoJavac", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y openjdk-17-jdk-headless") {
		t.Errorf("error %q does not say how to install a JDK", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("failed build left files in the output directory: %v", entries)
	}
}
