// Package refagent builds the buildguard reference agent: a small Java 17 agent
// jar (standard library only) that speaks the Reclazz status-socket protocol as
// a server (docs/agent-protocol.md) and really reloads
// classes with Instrumentation.redefineClasses, honouring BUILD holds, RELOAD
// pauses and VERIFY receipts.
//
// It exists so that the acceptance harness and the client matrix can observe a
// live JVM whose partial build output never goes live. It is a test and
// demonstration agent, never the Reclazz agent: its release string is
// [Release]. See README.md in this directory for its arguments and limits.
//
// The Java sources are embedded (src/), so [Build] works from any working
// directory. Build needs javac 17 or newer on PATH and downloads nothing.
// Product code never imports this package.
package refagent

import (
	"archive/zip"
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Release is the agent's Implementation-Version, the "agent" value of its
// CONNECTED handshake and the agentVersion of its DOCTOR evidence.
const Release = "buildguard-refagent-0.1.0"

// JarName is the file name Build writes into its output directory.
const JarName = "buildguard-refagent.jar"

// MainClass is the agent's Premain-Class and Agent-Class.
const MainClass = "dev.buildguard.refagent.Agent"

// ErrNoJavac means javac is not on PATH, so the agent cannot be compiled.
var ErrNoJavac = errors.New("javac not found on PATH: install a JDK 17 (apt-get install -y openjdk-17-jdk-headless)")

// ErrCompile means javac rejected the embedded sources; the error carries its output.
var ErrCompile = errors.New("compiling the reference agent")

//go:embed src
var sources embed.FS

// zipEpoch is the fixed modification time of every jar entry, so that the jar
// bytes depend only on the sources and the JDK.
var zipEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Build compiles the embedded agent sources with `javac --release 17` and
// writes the agent jar to outDir/JarName, replacing it atomically. It returns
// the absolute jar path. The output is deterministic for a given JDK. It fails
// with ErrNoJavac when javac is missing and with ErrCompile when javac fails.
func Build(ctx context.Context, outDir string) (jarPath string, err error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return "", ErrNoJavac
	}
	outDir, err = filepath.Abs(outDir)
	if err != nil {
		return "", fmt.Errorf("resolving output directory: %w", err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("creating output directory: %w", err)
	}
	work, err := os.MkdirTemp("", "refagent-build-")
	if err != nil {
		return "", fmt.Errorf("creating build directory: %w", err)
	}
	defer os.RemoveAll(work)

	srcDir := filepath.Join(work, "src")
	javaFiles, manifest, err := extractSources(srcDir)
	if err != nil {
		return "", err
	}
	classDir := filepath.Join(work, "classes")
	args := append([]string{"--release", "17", "-encoding", "UTF-8", "-nowarn", "-d", classDir}, javaFiles...)
	cmd := exec.CommandContext(ctx, javac, args...)
	cmd.Dir = work
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: %w", ErrCompile, ctx.Err())
		}
		return "", fmt.Errorf("%w: javac %v: %s (javac 17 or newer is needed: apt-get install -y openjdk-17-jdk-headless)",
			ErrCompile, err, strings.TrimSpace(out.String()))
	}

	jarPath = filepath.Join(outDir, JarName)
	tmp, err := os.CreateTemp(outDir, "."+JarName+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("creating jar: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := writeJar(tmp, manifest, classDir); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("writing jar: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", fmt.Errorf("writing jar: %w", err)
	}
	if err := os.Rename(tmp.Name(), jarPath); err != nil {
		return "", fmt.Errorf("installing jar: %w", err)
	}
	return jarPath, nil
}

// extractSources writes the embedded .java files below dir and returns their
// paths (sorted) and the manifest text.
func extractSources(dir string) (javaFiles []string, manifest []byte, err error) {
	err = fs.WalkDir(sources, "src", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := sources.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "src/")
		if rel == "META-INF/MANIFEST.MF" {
			manifest = data
			return nil
		}
		if path.Ext(rel) != ".java" {
			return nil
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		javaFiles = append(javaFiles, dst)
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("extracting agent sources: %w", err)
	}
	if manifest == nil || len(javaFiles) == 0 {
		return nil, nil, fmt.Errorf("extracting agent sources: embedded tree lacks the manifest or Java files")
	}
	if !bytes.HasSuffix(manifest, []byte("\n")) {
		manifest = append(manifest, '\n')
	}
	sort.Strings(javaFiles)
	return javaFiles, manifest, nil
}

// writeJar writes a jar: the manifest first, then every file of classDir in
// sorted order with directory entries, all with a fixed timestamp.
func writeJar(w *os.File, manifest []byte, classDir string) error {
	var names []string
	err := filepath.WalkDir(classDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == classDir {
			return err
		}
		rel, err := filepath.Rel(classDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing classes: %w", err)
	}
	sort.Strings(names)

	zw := zip.NewWriter(w)
	add := func(name string, data []byte) error {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: zipEpoch}
		if strings.HasSuffix(name, "/") {
			h.Method = zip.Store
		}
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return err
	}
	if err := add("META-INF/", nil); err != nil {
		return fmt.Errorf("writing jar: %w", err)
	}
	if err := add("META-INF/MANIFEST.MF", manifest); err != nil {
		return fmt.Errorf("writing jar: %w", err)
	}
	for _, n := range names {
		var data []byte
		if !strings.HasSuffix(n, "/") {
			data, err = os.ReadFile(filepath.Join(classDir, filepath.FromSlash(n)))
			if err != nil {
				return fmt.Errorf("writing jar: %w", err)
			}
		}
		if err := add(n, data); err != nil {
			return fmt.Errorf("writing jar: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("writing jar: %w", err)
	}
	return nil
}
