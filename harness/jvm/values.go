// Package jvm is the one JVM fixture of the harness: [Start] launches a live
// JVM in its own process group and keeps its output line by line
// ([LineLog]); [Process.WaitLine] waits for a line, bounded and ending early
// when the JVM exits; [Process.Kill] ends it and its group. The agent
// conformance suite, the reference agent's tests, the acceptance proof and
// the client matrix all start their JVMs with it.
//
// It also holds the Java sources of the live application most of them run
// under an agent: App prints VALUES=<a>:<b> every 25 ms, the values of one A
// and one B, so a reload is seen in its output.
//
// It owns starting, watching and stopping a JVM; it does not own what the
// JVM runs (the agents, the Gradle and Maven projects, the client matrix's
// PROBE application).
package jvm

import (
	"fmt"
	"regexp"
	"strconv"
)

// App is the source of class App, in the default package.
const App = `public class App {
    public static void main(String[] args) throws Exception {
        A a = new A();
        B b = new B();
        while (true) {
            System.out.println("VALUES=" + a.value() + ":" + b.value());
            System.out.flush();
            Thread.sleep(25);
        }
    }
}
`

// Class returns the source of class name, in the default package, whose
// value() returns v.
func Class(name string, v int) string { return class(name, strconv.Itoa(v)) }

// BrokenClass returns the source of class name whose value() returns an
// undefined identifier: it does not compile.
func BrokenClass(name string) string { return class(name, "missingSymbol") }

func class(name, expr string) string {
	return fmt.Sprintf("public class %s {\n    public int value() {\n        return %s;\n    }\n}\n", name, expr)
}

var line = regexp.MustCompile(`^VALUES=(-?[0-9]+):(-?[0-9]+)$`)

// ParseValues returns the values of a VALUES line printed by App.
func ParseValues(s string) (a, b int, ok bool) {
	m := line.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	a, errA := strconv.Atoi(m[1])
	b, errB := strconv.Atoi(m[2])
	if errA != nil || errB != nil {
		return 0, 0, false
	}
	return a, b, true
}
