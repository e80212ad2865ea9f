// Command scalebuild is the raw build of the scale bench
// (docs/performance.md#5): it rewrites the class files a change of -change
// classes rewrites in the project scale.Project generated, with the bytes
// of -run, as a compiler rewrites the classes it compiled, and prints one
// line that says how long the rewriting took. It exits 2 on a usage error, 1 when the project is not one
// scale.Project can have or a file cannot be written.
//
//	scalebuild -dir PROJECT -classes N -packages P -change K -run R
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/buildguard/buildguard/harness/scale"
)

func main() {
	fs := flag.NewFlagSet("scalebuild", flag.ContinueOnError)
	var p scale.Project
	fs.StringVar(&p.Dir, "dir", "", "project directory")
	fs.IntVar(&p.Classes, "classes", 0, "class files of the project")
	fs.IntVar(&p.Packages, "packages", 0, "packages of the project")
	k := fs.Int("change", 0, "classes to rewrite")
	run := fs.Int("run", 0, "run whose bytes to write")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: scalebuild -dir PROJECT -classes N -packages P -change K -run R")
		os.Exit(2)
	}
	start := time.Now()
	n, err := p.Rewrite(*k, *run)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scalebuild:", err)
		os.Exit(1)
	}
	fmt.Printf("compiled %d of %d classes (run %d) in %.3f ms\n", n, p.Classes, *run, float64(time.Since(start))/float64(time.Millisecond))
}
