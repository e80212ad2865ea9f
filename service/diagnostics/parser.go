package diagnostics

import (
	"hash/maphash"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// Bounds of what a Parser keeps (docs/safe-build.md#12).
const (
	// MaxDiagnostics is the most diagnostics a Summary lists; the rest are
	// counted in Omitted.
	MaxDiagnostics = 50
	// MaxLineBytes is the most bytes of one output line the parser reads;
	// the rest of a longer line is skipped.
	MaxLineBytes = 8 << 10
	// MaxMessageBytes is the most bytes of one diagnostic's message, and of
	// its file.
	MaxMessageBytes = 512
	// MaxNameBytes is the most bytes of a module or task name, in a
	// diagnostic and in the failed tasks and modules.
	MaxNameBytes = 256
	// MaxSummaryJSON is the most bytes the diagnostics and the failed tasks
	// and modules of a Summary take as JSON: diagnostics beyond it are
	// counted in Omitted, names beyond it left out.
	MaxSummaryJSON = 32 << 10
	// maxNamesJSON is the part of MaxSummaryJSON the failed tasks and
	// modules may take.
	maxNamesJSON = 8 << 10
	// maxCandidates bounds the places of one line tried as the separator of
	// a located format (": error: ", ":[LINE,COL]", ": (LINE, COL)"): the
	// parser's budget per line, whatever the line holds.
	maxCandidates = 64
	// maxSeen bounds the hashes kept to recognise duplicates beyond the
	// listed diagnostics; past it the rest are counted without merging.
	maxSeen = 4096
	// maxNames bounds failedTasks and failedModules.
	maxNames = MaxDiagnostics
	// maxDetails bounds the detail lines joined to one message.
	maxDetails = 8
)

// Severities of a Diagnostic.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Diagnostic is one error or warning of a build. Fields a format does not
// give are empty and left out of the JSON.
type Diagnostic struct {
	// Severity is SeverityError or SeverityWarning.
	Severity string `json:"severity"`
	// File is the source file, relative to the project directory when it
	// lies inside it, else as the tool printed it.
	File string `json:"file,omitempty"`
	// Line and Column are 1-based; 0 when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Message is the tool's message with its detail lines (javac's symbol
	// and location), whitespace collapsed, at most MaxMessageBytes.
	Message string `json:"message"`
	// Module is the Gradle project path without its leading colon, or the
	// Maven module (artifactId), the diagnostic was reported in.
	Module string `json:"module,omitempty"`
	// Task is the Gradle task path or the Maven goal that reported it.
	Task string `json:"task,omitempty"`

	generic bool   // a wrapper such as "Compilation failed; see the compiler error output"
	key     uint64 // the hash of its file as printed, before it was cut
}

// Summary is what a Parser found.
type Summary struct {
	// Diagnostics are errors, then warnings, each in order of first
	// appearance, duplicates merged, at most MaxDiagnostics.
	Diagnostics []Diagnostic
	// Omitted counts the diagnostics found but not listed.
	Omitted int
	// Errors and Warnings count every distinct diagnostic of each severity,
	// listed or not.
	Errors, Warnings int
	// FailedTasks are the Gradle tasks and Maven goals that failed, in
	// order, at most MaxDiagnostics.
	FailedTasks []string
	// FailedModules are the Gradle projects and Maven modules that failed,
	// in order, at most MaxDiagnostics.
	FailedModules []string
}

// Config configures a Parser. The zero value is ready to use.
type Config struct {
	// Dir is the project directory: files inside it are reported relative
	// to it. Empty: files are reported as printed.
	Dir string
}

// state is what the parser expects of the next line.
type state uint8

const (
	stNone    state = iota
	stSource        // after a javac/kotlinc header: the source line
	stCaret         // after the source line: the caret line
	stDetails       // indented detail lines of the pending diagnostic
)

// Parser reads a build's output. It is not safe for concurrent use; feed it
// from one writer (or under one lock).
type Parser struct {
	dirs []string // the project directory, and its real path when different

	line    []byte // the line being read, at most MaxLineBytes
	skipped bool   // the current line was longer than MaxLineBytes
	resync  bool   // output was lost: skip to the next newline

	st      state
	pending *Diagnostic
	details int

	// the task and module whose output is being read
	task, module string

	// a Gradle "* What went wrong:" block
	inBlock   bool
	block     *Diagnostic
	blockHead bool // the block's first line was read

	errs, warns []Diagnostic // listed candidates, at most MaxDiagnostics each
	nErr, nWarn int          // distinct diagnostics of each severity
	seed        maphash.Seed
	seen        map[uint64]struct{} // hashes of distinct diagnostics not in errs/warns

	// Maven's compiler messages follow "[ERROR] COMPILATION ERROR :" and a
	// goal's "Compilation failure": its [ERROR] lines without a position
	// are errors of their own.
	mvnMessages bool

	failedTasks, failedModules []string
	moduleTask                 map[string]string // a failed module's first failed task
}

// New returns a Parser for the project in cfg.Dir.
func New(cfg Config) *Parser {
	p := &Parser{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}, moduleTask: map[string]string{}, line: make([]byte, 0, 256)}
	if cfg.Dir != "" {
		d := filepath.Clean(cfg.Dir)
		p.dirs = append(p.dirs, d)
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			p.dirs = append(p.dirs, real)
		}
	}
	return p
}

// located builds a diagnostic with a file position from a match. Files
// are told apart by the whole path printed, also when it is cut.
func (p *Parser) located(sev, file string, line, col []byte, msg string) *Diagnostic {
	file = p.relative(strings.TrimSpace(file))
	if strings.IndexByte(file, 0x1b) >= 0 || strings.Contains(file, string(c1CSI)) {
		file = string(stripANSI([]byte(file))) // decoded from a file: URI
	}
	var h maphash.Hash
	h.SetSeed(p.seed)
	h.WriteString(file)
	d := &Diagnostic{Severity: sev, File: name(file, MaxMessageBytes), Message: clean(msg), Module: p.module, Task: p.task, key: h.Sum64()}
	d.Line = atoi(line)
	d.Column = atoi(col)
	return d
}

// start makes d the pending diagnostic, completing the one before.
func (p *Parser) start(d *Diagnostic, next state) {
	p.flush()
	if d.Module == "" && d.Task == "" {
		d.Module, d.Task = p.module, p.task
	}
	p.pending, p.st, p.details = d, next, 0
}

// flush adds the pending diagnostic.
func (p *Parser) flush() {
	if p.pending != nil {
		p.add(p.pending)
		p.pending = nil
	}
	p.st = stNone
}

// add merges d into what was found.
func (p *Parser) add(d *Diagnostic) {
	if d.Message == "" && d.File == "" {
		return
	}
	list, n := &p.errs, &p.nErr
	if d.Severity == SeverityWarning {
		list, n = &p.warns, &p.nWarn
	}
	for i := range *list {
		o := &(*list)[i]
		if o.key == d.key && o.Line == d.Line && o.File == d.File && o.Message == d.Message && (o.Column == d.Column || o.Column == 0 || d.Column == 0) {
			if o.Column == 0 {
				o.Column = d.Column
			}
			if o.Module == "" {
				o.Module = name(d.Module, MaxNameBytes)
			}
			if o.Task == "" {
				o.Task = name(d.Task, MaxNameBytes)
			}
			return
		}
	}
	if len(*list) < MaxDiagnostics {
		d.Module, d.Task = name(d.Module, MaxNameBytes), name(d.Task, MaxNameBytes)
		*list = append(*list, *d)
		*n++
		return
	}
	var h maphash.Hash
	h.SetSeed(p.seed)
	h.WriteString(d.Severity)
	h.WriteByte(0)
	h.WriteString(strconv.FormatUint(d.key, 16))
	h.WriteByte(0)
	h.WriteString(strconv.Itoa(d.Line))
	h.WriteByte(0)
	h.WriteString(d.Message)
	k := h.Sum64()
	if _, dup := p.seen[k]; dup {
		return
	}
	if len(p.seen) < maxSeen {
		p.seen[k] = struct{}{}
	}
	*n++
}

// failed notes a failed task and module.
func (p *Parser) failed(task, module string) {
	task, module = name(task, MaxNameBytes), name(module, MaxNameBytes)
	if task != "" && len(p.failedTasks) < maxNames && !contains(p.failedTasks, task) {
		p.failedTasks = append(p.failedTasks, task)
	}
	if module != "" && len(p.failedModules) < maxNames && !contains(p.failedModules, module) {
		p.failedModules = append(p.failedModules, module)
	}
	if _, known := p.moduleTask[module]; task != "" && module != "" && !known && len(p.moduleTask) < maxNames {
		p.moduleTask[module] = task
	}
}

// relative is file relative to the project directory when inside it.
func (p *Parser) relative(file string) string {
	if strings.HasPrefix(file, "file:") {
		if u, err := url.Parse(file); err == nil && u.Path != "" {
			file = u.Path
		}
	}
	if !filepath.IsAbs(file) {
		return file
	}
	for _, d := range p.dirs {
		if len(file) > len(d)+1 && file[len(d)] == filepath.Separator && file[:len(d)] == d &&
			!strings.Contains(file, "/.") && !strings.Contains(file, "//") {
			return file[len(d)+1:]
		}
	}
	file = filepath.Clean(file)
	for _, d := range p.dirs {
		if r, err := filepath.Rel(d, file); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
	}
	return file
}

func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		if n > 1<<30 {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
