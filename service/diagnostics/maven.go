package diagnostics

import (
	"bytes"
	"strings"
)

// mavenLine reads a line with Maven's [LEVEL] prefix.
func (p *Parser) mavenLine(line []byte) bool {
	switch {
	case bytes.HasPrefix(line, []byte("[INFO] --- ")):
		if len(line) < 12 || line[11] == '-' || !bytes.Contains(line, []byte(" @ ")) {
			return false
		}
		if goal, module, ok := splitMojo(line[len("[INFO] --- "):]); ok {
			p.task, p.module = shortGoal(string(goal)), string(module)
		}
		return false
	case bytes.HasPrefix(line, []byte("[ERROR] Failed to execute goal ")):
		if goal, module, rest, ok := splitFailedGoal(line[len("[ERROR] Failed to execute goal "):]); ok {
			task, module := name(shortGoal(string(goal)), MaxNameBytes), name(module, MaxNameBytes)
			p.failed(task, module)
			msg := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(rest)), "-> [Help 1]"))
			d := &Diagnostic{Severity: SeverityError, Message: clean(msg), Module: module, Task: task}
			d.generic = msg == "" || strings.HasPrefix(msg, "Compilation failure")
			if d.Message == "" {
				d.Message = "Failed to execute goal " + task
			}
			p.start(d, stNone)
			p.flush()
			// The goal's messages follow, mvn -q's only copy of those
			// without a file.
			p.task, p.module, p.mvnMessages = task, module, d.generic
		}
		return false
	case bytes.HasPrefix(line, []byte("[ERROR] COMPILATION ERROR :")):
		p.mvnMessages = true
		return false
	case bytes.HasPrefix(line, []byte("[INFO] ")):
		if !bytes.HasPrefix(line, []byte("[INFO] ---")) {
			p.mvnMessages = false
		}
		return false
	case bytes.HasPrefix(line, []byte("[ERROR] ")), bytes.HasPrefix(line, []byte("[WARNING] ")), bytes.HasPrefix(line, []byte("[WARN] ")):
	default:
		return false
	}
	rest := line[bytes.IndexByte(line, ']')+2:]
	if p.mvnMessages && line[1] == 'E' && (len(rest) == 0 || bytes.HasPrefix(rest, []byte("-> ["))) {
		p.mvnMessages = false
		return false
	}
	if file, ln, col, msg, ok := splitMaven(rest); ok {
		sev := SeverityError
		if line[1] == 'W' {
			sev = SeverityWarning
		}
		p.start(p.located(sev, string(file), ln, col, string(msg)), stDetails)
		return true
	}
	if !bytes.HasPrefix(line, []byte("[WARN] ")) {
		sev := byte('e')
		if line[1] == 'W' {
			sev = 'w'
		}
		if p.kotlinLocated(sev, rest) {
			return true
		}
	}
	// javac's own lines passed through Maven: [ERROR] error: …, [WARNING] F:12: warning: …
	if bytes.HasPrefix(rest, []byte("error: ")) || bytes.HasPrefix(rest, []byte("warning: ")) ||
		bytes.Contains(rest, []byte(": error: ")) || bytes.Contains(rest, []byte(": warning: ")) {
		if p.compilerLine(rest) {
			return true
		}
	}
	if p.mvnMessages && line[1] == 'E' && rest[0] != ' ' && rest[0] != '\t' {
		return p.mavenMessage(rest)
	}
	return false
}

// mavenMessage reads a compiler message Maven printed without a position:
// "FILE: MESSAGE" (javac's -Werror) or the message alone ("Annotation
// processor 'com.Nope' not found").
func (p *Parser) mavenMessage(rest []byte) bool {
	if file, msg, ok := splitFileMessage(rest); ok {
		p.start(p.located(SeverityError, string(file), nil, nil, string(msg)), stDetails)
		return true
	}
	p.start(&Diagnostic{Severity: SeverityError, Message: clean(string(rest))}, stDetails)
	return true
}

// shortGoal drops the group of a Maven goal: "org.apache.maven.plugins:
// maven-compiler-plugin:3.10.1:compile (default-compile)" is
// "maven-compiler-plugin:3.10.1:compile (default-compile)".
func shortGoal(goal string) string {
	head, exec, _ := strings.Cut(goal, " ")
	if strings.Count(head, ":") >= 3 {
		head = head[strings.IndexByte(head, ':')+1:]
	}
	if exec != "" {
		return head + " " + exec
	}
	return head
}

// splitMaven splits what follows Maven's [LEVEL] in "FILE:[LINE,COL] MSG".
func splitMaven(rest []byte) (file, ln, col, msg []byte, ok bool) {
	for from, tries := 0, 0; from < len(rest) && tries < maxCandidates; tries++ {
		i := bytes.Index(rest[from:], []byte(":["))
		if i < 0 {
			return
		}
		i += from
		from = i + 2
		pos := rest[i+2:]
		end := bytes.IndexByte(pos[:min(len(pos), 20)], ']') // 9 digits, a comma, 9 digits
		if end < 0 {
			continue
		}
		l, c, found := bytes.Cut(pos[:end], []byte(","))
		if !found || !digits(l) || !digits(c) || i == 0 {
			continue
		}
		return rest[:i], l, c, bytes.TrimPrefix(pos[end+1:], []byte(" ")), true
	}
	return
}

// splitFileMessage splits Maven's "FILE: MESSAGE" of a compiler message
// about a whole source file (javac's "warnings found and -Werror
// specified").
func splitFileMessage(rest []byte) (file, msg []byte, ok bool) {
	i := bytes.Index(rest, []byte(": "))
	if i <= 0 || bytes.IndexByte(rest[:i], '/') < 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
		return nil, nil, false
	}
	for _, ext := range []string{".java", ".kt", ".kts", ".groovy", ".scala"} {
		if bytes.HasSuffix(rest[:i], []byte(ext)) {
			return rest[:i], rest[i+2:], true
		}
	}
	return nil, nil, false
}

// digits reports whether b is 1 to 9 decimal digits.
func digits(b []byte) bool {
	if len(b) == 0 || len(b) > 9 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// splitMojo splits what follows Maven's "[INFO] --- " in
// "maven-compiler-plugin:3.10.1:compile (default-compile) @ b ---".
func splitMojo(rest []byte) (goal, module []byte, ok bool) {
	at := bytes.Index(rest, []byte(" @ "))
	if at <= 0 {
		return nil, nil, false
	}
	goal, after := rest[:at], rest[at+3:]
	end := bytes.Index(after, []byte(" ---"))
	if end <= 0 || bytes.IndexByte(after[:end], ' ') >= 0 {
		return nil, nil, false
	}
	return goal, after[:end], true
}

// splitFailedGoal splits what follows Maven's "[ERROR] Failed to execute
// goal " in "GOAL (EXECUTION) on project MODULE: MESSAGE" (the goal may be
// missing).
func splitFailedGoal(rest []byte) (goal []byte, module string, msg []byte, ok bool) {
	i := bytes.Index(rest, []byte("on project "))
	if i < 0 {
		return nil, "", nil, false
	}
	goal = bytes.TrimSpace(rest[:i])
	after := rest[i+len("on project "):]
	j := bytes.IndexByte(after, ':')
	if j < 0 {
		j = len(after)
	}
	m := bytes.TrimSpace(after[:j])
	if len(m) == 0 || bytes.IndexByte(m, ' ') >= 0 {
		return nil, "", nil, false
	}
	if j < len(after) {
		msg = after[j+1:]
	}
	return goal, string(m), msg, true
}
