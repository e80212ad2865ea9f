package diagnostics

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// Regular expressions of the Gradle formats; each runs only on a line a
// cheap test has picked, and in time linear in it.
var (
	// Gradle 4: ":b:compileJava" and the compiler's line on one line
	reGradleGlued = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(:[^\s/\\':]+(?::[^\s/\\':]+)*)(/\S)`) })
	// Gradle: task ':b:compileJava', project ':b', configuration ':b:compileClasspath'
	reGradleWhere = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(task|project|configuration) '(:[^']*)'`) })
)

// gradleTask notes the task whose output follows, and a failed one.
func (p *Parser) gradleTask(task, status string) {
	if task == ":" || strings.HasSuffix(task, ":") {
		return
	}
	p.task, p.module = task, gradleModule(task)
	if strings.TrimSpace(status) == "FAILED" {
		p.failed(task, p.module)
	}
}

// blockLine reads a line of Gradle's "* What went wrong:" block.
func (p *Parser) blockLine(line []byte) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || bytes.HasPrefix(line, []byte("* ")) {
		p.endBlock()
		p.lineOutsideBlock(line)
		return
	}
	b := p.block
	switch {
	case !p.blockHead:
		p.blockHead = true
		b.Message = clean(string(t))
		if m := reGradleWhere().FindStringSubmatch(b.Message); m != nil {
			switch m[1] {
			case "task":
				b.Task, b.Module = m[2], gradleModule(m[2])
				p.failed(b.Task, b.Module)
			case "project":
				b.Module = strings.TrimPrefix(m[2], ":")
				p.failed("", b.Module)
			case "configuration":
				b.Module = gradleModule(m[2])
				p.failed("", b.Module)
			}
		}
	case t[0] == '>':
		cause := string(bytes.TrimSpace(t[1:]))
		if strings.HasPrefix(cause, "Compilation failed; see the compiler") ||
			strings.HasPrefix(cause, "Compilation error. See log for more details") {
			b.generic = true
		}
		b.Message = appendMessage(b.Message, " ", cause)
	default:
		// Gradle 8 and later repeat the compiler's output inside the block,
		// indented by two spaces.
		inner := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte(" ")), []byte(" "))
		task, module := p.task, p.module
		p.task, p.module = b.Task, b.Module
		p.lineOutsideBlock(inner)
		p.task, p.module = task, module
	}
}

// endBlock adds the Gradle block's diagnostic.
func (p *Parser) endBlock() {
	p.flush()
	p.inBlock = false
	if p.blockHead && p.block.Message != "" {
		p.add(p.block)
	}
	p.block = nil
}

// gradleModule is the project of a Gradle task or configuration path
// (":b:compileJava" is "b", ":x:y:compileJava" is "x:y", ":compileJava"
// is the root project, "").
func gradleModule(path string) string {
	i := strings.LastIndexByte(path, ':')
	if i <= 0 {
		return ""
	}
	return strings.TrimPrefix(path[:i], ":")
}

// splitGradleTask splits Gradle's task lines "> Task :b:compileJava FAILED"
// and (Gradle 4's plain console) ":b:compileJava UP-TO-DATE".
func splitGradleTask(line []byte) (task, status []byte, ok bool) {
	rest := bytes.TrimPrefix(line, []byte("> Task "))
	if len(rest) == 0 || rest[0] != ':' {
		return nil, nil, false
	}
	task = rest
	if sp := bytes.IndexByte(rest, ' '); sp >= 0 {
		task, status = rest[:sp], rest[sp+1:]
		if len(status) == 0 {
			return nil, nil, false
		}
		for _, c := range status {
			if (c < 'A' || c > 'Z') && c != '-' {
				return nil, nil, false
			}
		}
	}
	if bytes.ContainsAny(task, "'\t\v\f\r") {
		return nil, nil, false
	}
	return task, status, true
}
