package diagnostics

import "bytes"

// kotlinLine reads the Kotlin compiler's e:/w: lines: sev is 'e' or 'w',
// rest what follows "e: ".
func (p *Parser) kotlinLine(sev byte, rest []byte) bool {
	if p.kotlinLocated(sev, rest) {
		return true
	}
	p.start(&Diagnostic{Severity: kotlinSeverity(sev), Message: clean(string(rest))}, stDetails)
	return true
}

// kotlinLocated reads what follows Kotlin's "e: " or Maven's "[ERROR] " in
// the located Kotlin formats "file:///F.kt:12:5 MSG" and "/F.kt: (12, 5):
// MSG".
func (p *Parser) kotlinLocated(sev byte, rest []byte) bool {
	file, ln, col, msg, ok := splitKotlinURI(rest)
	if !ok {
		file, ln, col, msg, ok = splitKotlinOld(rest)
	}
	if ok {
		p.start(p.located(kotlinSeverity(sev), string(file), ln, col, string(msg)), stDetails)
	}
	return ok
}

func kotlinSeverity(sev byte) string {
	if sev == 'w' {
		return SeverityWarning
	}
	return SeverityError
}

// splitKotlinURI splits Kotlin's "file:///F.kt:12:5 MSG" (a colon may end
// the place).
func splitKotlinURI(rest []byte) (file, ln, col, msg []byte, ok bool) {
	if !bytes.HasPrefix(rest, []byte("file:")) {
		return
	}
	sp := bytes.IndexAny(rest, " \t\n\f\r")
	if sp < 0 || rest[sp] != ' ' {
		return
	}
	place := bytes.TrimSuffix(rest[:sp], []byte(":"))
	c, place, found := lastDigits(place)
	if !found {
		return
	}
	l, place, found := lastDigits(place)
	if !found || len(place) <= len("file:") {
		return
	}
	return place, l, c, rest[sp+1:], true
}

// splitKotlinOld splits the older Kotlin "/F.kt: (12, 5): MSG" at the first
// place that reads so.
func splitKotlinOld(rest []byte) (file, ln, col, msg []byte, ok bool) {
	for from, tries := 0, 0; from < len(rest) && tries < maxCandidates; tries++ {
		i := bytes.Index(rest[from:], []byte(": ("))
		if i < 0 {
			return
		}
		i += from
		from = i + 3
		if i == 0 {
			continue
		}
		l, after := leadingDigits(rest[i+3:])
		after, found := bytes.CutPrefix(after, []byte(", "))
		if len(l) == 0 || !found {
			continue
		}
		c, after := leadingDigits(after)
		after, found = bytes.CutPrefix(after, []byte(")"))
		if len(c) == 0 || !found {
			continue
		}
		after = bytes.TrimPrefix(after, []byte(":"))
		if m, found := bytes.CutPrefix(after, []byte(" ")); found {
			return rest[:i], l, c, m, true
		}
	}
	return
}

// lastDigits splits "HEAD:DIGITS" at its last colon when only decimal
// digits, at least one, follow it.
func lastDigits(b []byte) (num, head []byte, ok bool) {
	k := len(b)
	for k > 0 && b[k-1] >= '0' && b[k-1] <= '9' {
		k--
	}
	if k == len(b) || k == 0 || b[k-1] != ':' {
		return nil, nil, false
	}
	return b[k:], b[:k-1], true
}

// leadingDigits splits b after its leading decimal digits.
func leadingDigits(b []byte) (num, rest []byte) {
	k := 0
	for k < len(b) && b[k] >= '0' && b[k] <= '9' {
		k++
	}
	return b[:k], b[k:]
}
