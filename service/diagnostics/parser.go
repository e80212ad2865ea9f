package diagnostics

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
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

// Regular expressions of the Gradle formats; each runs only on a line a
// cheap test has picked, and in time linear in it.
var (
	// Gradle 4: ":b:compileJava" and the compiler's line on one line
	reGradleGlued = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(:[^\s/\\':]+(?::[^\s/\\':]+)*)(/\S)`) })
	// Gradle: task ':b:compileJava', project ':b', configuration ':b:compileClasspath'
	reGradleWhere = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(task|project|configuration) '(:[^']*)'`) })
)

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

// isCaret reports whether line is a caret line: blanks and '^' (javac
// prints one, kotlinc one under each character).
func isCaret(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) > 0 && len(bytes.Trim(t, "^")) == 0
}

// clean makes s a message: valid UTF-8, whitespace collapsed, control
// characters shown as '?', at most MaxMessageBytes.
func clean(s string) string {
	if tidy(s) {
		return cut(s, MaxMessageBytes)
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.Fields(s), " ")
	return cut(strings.Map(visibleRune, s), MaxMessageBytes)
}

// name makes s a file, module or task name: valid UTF-8, control
// characters shown as '?', at most n bytes; a longer one keeps its start
// and its end around "…".
func name(s string, n int) string {
	if !tidy(s) {
		s = strings.Map(visibleRune, strings.ToValidUTF8(s, "\uFFFD"))
	}
	if len(s) <= n {
		return s
	}
	const dots = "…"
	head := cut(s, n/4)
	tail := s[len(s)-(n-len(head)-len(dots)):]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + dots + tail
}

// Visible is s as a terminal or a model may be shown it: terminal escape
// sequences removed, control characters (C0, DEL, C1) and line or
// paragraph separators shown as '?', invalid UTF-8 as U+FFFD.
func Visible(s string) string {
	if tidy(s) || s == "" {
		return s
	}
	if strings.IndexByte(s, 0x1b) >= 0 || strings.Contains(s, string(c1CSI)) {
		s = string(stripANSI([]byte(s)))
	}
	return strings.Map(visibleRune, strings.ToValidUTF8(s, "\uFFFD"))
}

// visibleRune shows a control character (C0, DEL, C1) and a line or
// paragraph separator as '?': none of them reaches a terminal or a
// model's text.
func visibleRune(r rune) rune {
	if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
		return '?'
	}
	return r
}

// tidy reports whether s is already a message: ASCII without control
// characters, leading, trailing or doubled blanks.
func tidy(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return s == ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c >= 0x7f || (c == ' ' && s[i+1] == ' ') {
			return false
		}
	}
	return true
}

// appendMessage joins more to msg with sep, within MaxMessageBytes.
func appendMessage(msg, sep, more string) string {
	more = clean(more)
	if more == "" {
		return msg
	}
	if msg == "" {
		return more
	}
	return cut(msg+sep+more, MaxMessageBytes)
}

// cut shortens the valid UTF-8 string s to at most n bytes on a character
// boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
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

// c1CSI is U+009B, the one-character CSI, in UTF-8.
var c1CSI = []byte{0xc2, 0x9b}

// stripANSI removes terminal escape sequences: CSI (colours, cursor
// moves: ESC [ or U+009B, … final byte), the strings of OSC, DCS, SOS, PM and APC
// (ESC ] … up to BEL or ESC \) and two-byte escapes. What a cut sequence
// leaves is dropped with it.
func stripANSI(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == 0xc2 && i+1 < len(b) && b[i+1] == 0x9b {
			i += 2
			for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
				i++
			}
			continue
		}
		if b[i] != 0x1b {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '[':
			i += 2
			for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
				i++
			}
		case ']', 'P', 'X', '^', '_':
			i += 2
			for i < len(b) && b[i] != 0x07 && !(b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\') {
				i++
			}
			if i < len(b) && b[i] == 0x1b {
				i++
			}
		default:
			i++ // a two-byte escape
		}
	}
	return out
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
