package diagnostics

import "bytes"

// compilerLine reads javac's and kotlinc's own format.
func (p *Parser) compilerLine(line []byte) bool {
	if !bytes.Contains(line, []byte("error: ")) && !bytes.Contains(line, []byte("warning: ")) {
		return false
	}
	if file, ln, col, sev, msg, ok := splitCompiler(line); ok {
		d := p.located(sev, string(file), ln, col, string(msg))
		p.start(d, stSource)
		return true
	}
	if sev, msg, ok := splitGlobal(line); ok {
		d := &Diagnostic{Severity: sev, Message: clean(string(msg))}
		p.start(d, stDetails)
		return true
	}
	return false
}

// splitCompiler splits javac's and kotlinc's located line
// "FILE:LINE: error: MSG" (or FILE:LINE:COL: warning: MSG), leading blanks
// allowed.
func splitCompiler(line []byte) (file, ln, col []byte, sev string, msg []byte, ok bool) {
	for from, tries := 0, 0; from < len(line) && tries < maxCandidates; tries++ {
		i := bytes.Index(line[from:], []byte(": "))
		if i < 0 {
			return
		}
		i += from
		from = i + 2
		after := line[i+2:]
		switch {
		case bytes.HasPrefix(after, []byte("error: ")):
			sev, msg = SeverityError, after[len("error: "):]
		case bytes.HasPrefix(after, []byte("warning: ")):
			sev, msg = SeverityWarning, after[len("warning: "):]
		default:
			continue
		}
		head := line[:i] // FILE:LINE or FILE:LINE:COL
		n, rest, found := lastNumber(head)
		if !found {
			continue
		}
		ln, head = n, rest
		if n, rest, found := lastNumber(head); found {
			col, ln, head = ln, n, rest
		}
		file = bytes.TrimLeft(head, " \t")
		if len(file) == 0 || file[0] == '[' {
			continue
		}
		return file, ln, col, sev, msg, true
	}
	return
}

// lastNumber splits "HEAD:DIGITS" at its last colon when 1 to 9 decimal
// digits follow it, looking at no more than its last ten bytes.
func lastNumber(b []byte) (num, head []byte, ok bool) {
	k := len(b)
	for k > 0 && len(b)-k < 10 && b[k-1] >= '0' && b[k-1] <= '9' {
		k--
	}
	if k == len(b) || k == 0 || b[k-1] != ':' || len(b)-k > 9 {
		return nil, nil, false
	}
	return b[k:], b[:k-1], true
}

// splitGlobal splits javac's "error: MSG" without a file, leading blanks
// allowed.
func splitGlobal(line []byte) (sev string, msg []byte, ok bool) {
	t := bytes.TrimLeft(line, " \t\n\f\r")
	if rest, found := bytes.CutPrefix(t, []byte("error: ")); found {
		return SeverityError, rest, true
	}
	if rest, found := bytes.CutPrefix(t, []byte("warning: ")); found {
		return SeverityWarning, rest, true
	}
	return "", nil, false
}
