package diagnostics

import "bytes"

// Write implements io.Writer: it reads b as more of the build's output. It
// never fails.
func (p *Parser) Write(b []byte) (int, error) {
	n := len(b)
	if p.resync {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return n, nil
		}
		b, p.resync = b[i+1:], false
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.keep(b)
			break
		}
		p.keep(b[:i])
		p.endLine()
		b = b[i+1:]
	}
	return n, nil
}

// lost notes that output was left out before what is written next: the
// line being read is skipped, and when the output left out did not end a
// line (partial) the rest of the next one too; what was pending is
// completed.
func (p *Parser) lost(partial bool) {
	p.line, p.skipped, p.resync = p.line[:0], false, partial
	if p.inBlock {
		p.endBlock()
	}
	p.flush()
}

func (p *Parser) keep(b []byte) {
	room := MaxLineBytes - len(p.line)
	if len(b) > room {
		b = b[:room]
		p.skipped = true
	}
	p.line = append(p.line, b...)
}

func (p *Parser) endLine() {
	line := bytes.TrimRight(p.line, "\r")
	// A carriage return inside a line starts the text a terminal shows
	// over what came before: each part is read as a line of its own.
	for {
		i := bytes.IndexByte(line, '\r')
		if i < 0 {
			break
		}
		if i > 0 {
			p.Line(line[:i])
		}
		line = line[i+1:]
	}
	p.Line(line)
	p.line = p.line[:0]
	p.skipped = false
}

// Line reads one complete line of output (without its newline).
func (p *Parser) Line(line []byte) {
	if bytes.IndexByte(line, 0x1b) >= 0 || bytes.Contains(line, c1CSI) {
		line = stripANSI(line)
	}
	if p.inBlock {
		p.blockLine(line)
		return
	}
	p.lineOutsideBlock(line)
}

// lineOutsideBlock handles a line of ordinary output.
func (p *Parser) lineOutsideBlock(line []byte) {
	switch p.st {
	case stSource:
		if p.header(line) {
			return
		}
		p.st = stCaret
		return
	case stCaret:
		if isCaret(line) {
			if p.pending != nil && p.pending.Column == 0 {
				p.pending.Column = bytes.IndexByte(line, '^') + 1
			}
			p.st = stDetails
			return
		}
		p.st = stDetails
		fallthrough
	case stDetails:
		if p.detail(line) {
			return
		}
	}
	p.flush()
	p.header(line)
}

// detail appends an indented detail line (javac's "  symbol: …") to the
// pending diagnostic.
func (p *Parser) detail(line []byte) bool {
	if p.pending == nil || len(line) == 0 {
		return false
	}
	if line[0] == '[' {
		// Maven repeats the details with its prefix: "[ERROR]   symbol: …"
		for _, prefix := range mavenPrefixes {
			if rest, ok := bytes.CutPrefix(line, prefix); ok && len(rest) > 1 && rest[0] == ' ' {
				line = rest
				break
			}
		}
	}
	if line[0] != ' ' && line[0] != '\t' {
		return false
	}
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] == '^' {
		return false
	}
	if p.details < maxDetails {
		p.pending.Message = appendMessage(p.pending.Message, "; ", string(t))
	}
	p.details++
	return true
}

var mavenPrefixes = [][]byte{[]byte("[ERROR] "), []byte("[WARNING] "), []byte("[WARN] ")}

// header reads a line that may start a diagnostic or set the context; it
// reports whether it started a pending diagnostic.
func (p *Parser) header(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	switch line[0] {
	case '[':
		return p.mavenLine(line)
	case 'e', 'w':
		if len(line) > 2 && line[1] == ':' && line[2] == ' ' {
			return p.kotlinLine(line[0], line[3:])
		}
	case '*':
		if bytes.HasPrefix(line, []byte("* What went wrong:")) {
			p.inBlock, p.blockHead = true, false
			p.block = &Diagnostic{Severity: SeverityError}
			return false
		}
	case '>':
		if !bytes.HasPrefix(line, []byte("> Task :")) {
			break
		}
		if task, status, ok := splitGradleTask(line); ok {
			p.gradleTask(string(task), string(status))
			return false
		}
	case ':':
		if task, status, ok := splitGradleTask(line); ok {
			p.gradleTask(string(task), string(status))
			return false
		}
		// Gradle 4's plain console prints the task without a newline and the
		// compiler's first line right after it: ":b:compileJava/p/B.java:3: error: …"
		if m := reGradleGlued().FindSubmatchIndex(line); m != nil {
			p.gradleTask(string(line[m[2]:m[3]]), "")
			return p.header(line[m[3]:])
		}
	case ' ':
		// … and its status on a line of its own after the compiler's output.
		if string(line) == " FAILED" && p.task != "" {
			p.failed(p.task, p.module)
			return false
		}
	}
	return p.compilerLine(line)
}

// isCaret reports whether line is a caret line: blanks and '^' (javac
// prints one, kotlinc one under each character).
func isCaret(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) > 0 && len(bytes.Trim(t, "^")) == 0
}
