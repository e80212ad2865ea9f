// Package scale writes the generated projects of the scale bench
// (docs/performance.md#5): a project directory whose .buildguard.json names
// one build, with N class files in P packages under build/classes, the
// directory the agent watches; and it rewrites K of them with new bytes, as
// a compiler would, for the raw build (cmd/scalebuild). Everything it
// writes is a function of its inputs: the same project, change and run give
// the same paths and the same bytes.
//
// It owns the projects and their bytes only; the benchmark that runs the
// raw build next to `buildguard build run` against the fake agent is in
// this package's tests.
package scale

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// BuildName is the one build the project's .buildguard.json names.
const BuildName = "scale"

// classSize is the size of every generated class file: about what a small
// compiled class of a real project weighs.
const classSize = 1536

// Project is a generated project: Classes class files spread evenly over
// Packages packages.
type Project struct {
	// Dir is the project directory.
	Dir string
	// Classes is the number of class files, at least 1.
	Classes int
	// Packages is the number of packages, 1 to Classes.
	Packages int
}

// check reports whether p can be generated.
func (p Project) check() error {
	switch {
	case p.Dir == "":
		return errors.New("scale: the project has no directory")
	case p.Classes < 1:
		return fmt.Errorf("scale: %d classes: a project has at least one", p.Classes)
	case p.Packages < 1 || p.Packages > p.Classes:
		return fmt.Errorf("scale: %d packages for %d classes: give 1 to %d", p.Packages, p.Classes, p.Classes)
	}
	return nil
}

// OutputDir is the directory the build writes its classes to and the agent
// watches: build/classes of the project.
func (p Project) OutputDir() string { return filepath.Join(p.Dir, "build", "classes") }

// ClassName is the binary name of class i (0 ≤ i < Classes): classes
// 0, 1, … fill package p000 first, then p001, so that the order of the
// indexes is the order of the names.
func (p Project) ClassName(i int) string {
	per := (p.Classes + p.Packages - 1) / p.Packages
	return fmt.Sprintf("scale.p%03d.C%06d", i/per, i)
}

// Path is the class file of class i under OutputDir.
func (p Project) Path(i int) string {
	return filepath.Join(p.OutputDir(), filepath.FromSlash(strings.ReplaceAll(p.ClassName(i), ".", "/")+".class"))
}

// Changed lists the classes a change of k rewrites, in the order of their
// names: k of them spread evenly over the project (every class when k is at
// least Classes; none when k < 1).
func (p Project) Changed(k int) []int {
	k = min(max(k, 0), p.Classes)
	out := make([]int, k)
	for j := range out {
		out[j] = j * p.Classes / k
	}
	return out
}

// Generate writes every class file (the bytes of run 0) and removes
// nothing else.
func (p Project) Generate() error {
	if err := p.check(); err != nil {
		return err
	}
	made := map[string]bool{}
	for i := range p.Classes {
		dir := filepath.Dir(p.Path(i))
		if !made[dir] {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("scale: generating %s: %w", p.Dir, err)
			}
			made[dir] = true
		}
		if err := os.WriteFile(p.Path(i), ClassBytes(p.ClassName(i), 0), 0o644); err != nil {
			return fmt.Errorf("scale: generating %s: %w", p.Dir, err)
		}
	}
	return nil
}

// Rewrite is the raw build: it rewrites the class files of Changed(k) in
// place with the bytes of run, in the order of their names, as javac
// rewrites the classes it compiled. It returns how many it wrote.
func (p Project) Rewrite(k, run int) (int, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	changed := p.Changed(k)
	for _, i := range changed {
		if err := os.WriteFile(p.Path(i), ClassBytes(p.ClassName(i), run), 0o644); err != nil {
			return 0, fmt.Errorf("scale: rewriting %s: %w", p.ClassName(i), err)
		}
	}
	return len(changed), nil
}

// BuildArgs are the arguments of cmd/scalebuild that rewrite Changed(k)
// with the bytes of run.
func (p Project) BuildArgs(k, run int) []string {
	return []string{"-dir", p.Dir, "-classes", strconv.Itoa(p.Classes), "-packages", strconv.Itoa(p.Packages),
		"-change", strconv.Itoa(k), "-run", strconv.Itoa(run)}
}

// Configure writes the project's .buildguard.json: one build, BuildName,
// that runs the program scalebuild (cmd/scalebuild) to rewrite Changed(k)
// with the bytes of run.
func (p Project) Configure(scalebuild string, k, run int) error {
	cfg := map[string]any{"builds": map[string]any{
		BuildName: map[string]any{"command": append([]string{scalebuild}, p.BuildArgs(k, run)...)},
	}}
	data, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.Dir, ".buildguard.json"), data, 0o644); err != nil {
		return fmt.Errorf("scale: configuring %s: %w", p.Dir, err)
	}
	return nil
}

// ClassSHA256 is the hex SHA-256 of ClassBytes(name, run): what an agent
// reports for the class it reloaded from those bytes.
func ClassSHA256(name string, run int) string {
	sum := sha256.Sum256(ClassBytes(name, run))
	return hex.EncodeToString(sum[:])
}

// ClassBytes is a minimal valid class file (Java 17, major version 61) of
// the binary name: a public class extending java.lang.Object, with no
// fields or methods, its SourceFile attribute, and one constant string
// naming run that pads the file to classSize bytes. Another run gives other
// bytes of the same size.
func ClassBytes(name string, run int) []byte {
	internal := strings.ReplaceAll(name, ".", "/")
	simple := internal[strings.LastIndexByte(internal, '/')+1:]
	b := []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 61}
	u16 := func(v int) { b = binary.BigEndian.AppendUint16(b, uint16(v)) }
	utf8 := func(s string) { b = append(b, 1); u16(len(s)); b = append(b, s...) }
	u16(8) // constants #1-#7
	b = append(b, 7)
	u16(2)         // #1 Class #2
	utf8(internal) // #2
	b = append(b, 7)
	u16(4)                   // #3 Class #4
	utf8("java/lang/Object") // #4
	utf8("SourceFile")       // #5
	utf8(simple + ".java")   // #6
	// #7, never referenced: the bytes of this run, padded. The tail is
	// access flags, this, super, no interfaces, fields or methods, and
	// one attribute: 2+2+2+2+2+2+2+2+4+2 = 22 bytes.
	pad := classSize - len(b) - 3 - 22
	text := fmt.Sprintf("run %d of %s ", run, name)
	u := strings.Repeat(text, pad/len(text)+1)[:max(pad, len(text))]
	utf8(u)
	u16(0x0021) // public, super
	u16(1)
	u16(3)
	u16(0) // interfaces
	u16(0) // fields
	u16(0) // methods
	u16(1) // attributes
	u16(5)
	b = binary.BigEndian.AppendUint32(b, 2)
	u16(6)
	return b
}
