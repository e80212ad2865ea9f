package diagnostics

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Summary completes the output read so far (a last line without a newline
// included) and returns what was found. The Parser may be fed more after.
func (p *Parser) Summary() Summary {
	if len(p.line) > 0 {
		p.endLine()
	}
	if p.inBlock {
		p.endBlock()
	}
	p.flush()
	specific := false
	for _, d := range p.errs {
		specific = specific || !d.generic
	}
	var s Summary
	s.Errors, s.Warnings = p.nErr, p.nWarn
	// The tasks take up to half of maxNamesJSON, the modules the rest.
	var left int
	s.FailedTasks, left = fitNames(p.failedTasks, maxNamesJSON/2)
	s.FailedModules, left = fitNames(p.failedModules, maxNamesJSON/2+left)
	room := MaxSummaryJSON - maxNamesJSON + left
	for _, d := range p.errs {
		if specific && d.generic {
			s.Errors-- // a wrapper of the errors listed: "Compilation failure"
			continue
		}
		d.Module, d.key = p.fileModule(d), 0
		if d.Task == "" {
			d.Task = p.moduleTask[d.Module]
		}
		s.Diagnostics = append(s.Diagnostics, d)
	}
	for _, d := range p.warns {
		d.Module, d.key = p.fileModule(d), 0
		s.Diagnostics = append(s.Diagnostics, d)
	}
	s.Diagnostics = s.Diagnostics[:min(len(s.Diagnostics), MaxDiagnostics)]
	for i, d := range s.Diagnostics {
		if room -= jsonLen(d) + 1; room < 0 {
			s.Diagnostics = s.Diagnostics[:i]
			break
		}
	}
	s.Omitted = s.Errors + s.Warnings - len(s.Diagnostics)
	return s
}

// fitNames is the first of names that fit in room bytes of JSON, and what
// is left of room.
func fitNames(names []string, room int) ([]string, int) {
	list := make([]string, 0, len(names))
	for _, n := range names {
		k := jsonLen(n) + 1
		if k > room {
			break
		}
		list, room = append(list, n), room-k
	}
	return list, room
}

// jsonLen is the length of v in JSON as encoding/json writes it (HTML
// characters escaped, its longest form).
func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// fileModule is d's module, or the failed module whose directory holds its
// file when the output named none (mvn -q prints no module headers).
func (p *Parser) fileModule(d Diagnostic) string {
	if d.Module != "" || d.File == "" || filepath.IsAbs(d.File) {
		return d.Module
	}
	for _, m := range p.failedModules {
		dir := strings.ReplaceAll(m, ":", "/") + "/"
		if strings.HasPrefix(filepath.ToSlash(d.File), dir) {
			return m
		}
	}
	return ""
}
