// Package jvm holds the Java sources of the live application that the
// agent conformance suite, the acceptance proof and the reference agent's
// tests run under an agent: App prints VALUES=<a>:<b> every 25 ms, the values
// of one A and one B, so a reload is seen in its output.
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
