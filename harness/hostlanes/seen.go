//go:build unix

package hostlanes

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/buildguard/buildguard/harness/hostlanes/model"
)

// The marks of what a host handed its model of one answer: the text's
// first line (`build "NAME": failed …`) and the structured result's
// outcome, each also quoted inside a JSON string.
var (
	textMark = regexp.MustCompile(`build \\*"[A-Za-z0-9_.-]+\\*": [a-z]+`)
	jsonMark = regexp.MustCompile(`\{\\*"outcome\\*":`)
)

// leadBound is how much of what a host puts before the result the section
// shows.
const leadBound = 100

// seenKind is one kind of answer of reclazz_safe_build and the lane that
// shows what a host handed its model of it.
type seenKind struct {
	what     string
	scenario string
	first    bool // the first safe build result of the lane, else the last
}

// seenKinds are the rows of each host's table in section 6.
var seenKinds = []seenKind{
	{"a failed build (`isError`)", FailingBuild.Name, false},
	{"an `ok` build", PassingBuild.Name, false},
	{"`running`, with its `buildId`", LongBuild.Name, true},
	{"the resumed build's own result", LongBuild.Name, false},
}

// writeSeen writes section 6 of the matrix: per host, from the records of
// the run, what its model received of each kind of answer, how it found
// the tool, how it resumed a running build, and the steps its user takes
// (Host.UserSteps).
func writeSeen(b *bytes.Buffer, recs []*Record) {
	b.WriteString(seenIntro)
	for i, h := range Hosts {
		b.WriteString(seenHeading(i, h))
		byScenario := map[string]*Record{}
		for _, r := range recs {
			if r.Host == h.Name {
				byScenario[r.Scenario] = r
			}
		}
		fmt.Fprintf(b, "- **The tool:** %s.%s\n", h.ToolName, toolSearchSeen(byScenario))
		b.WriteString("- **What the model received** of each answer:\n\n")
		b.WriteString("  | answer | lane | what the model received | marked as an error | before the result |\n")
		b.WriteString("  | --- | --- | --- | --- | --- |\n")
		for _, k := range seenKinds {
			fmt.Fprintf(b, "  | %s | %s | %s |\n", k.what, k.scenario, seenRow(byScenario[k.scenario], k.first))
		}
		fmt.Fprintf(b, "\n- **Running and resume:** %s\n", resumeSeen(byScenario[LongBuild.Name]))
		fmt.Fprintf(b, "- **What the user must do:** %s.\n", h.UserSteps)
	}
}

// seenHeading is the heading of host h, Hosts[i], in section 6.
func seenHeading(i int, h Host) string {
	return fmt.Sprintf("\n### 6.%d %s (`%s` %s)\n\n", i+1, h.Title, h.Package, h.Version)
}

// seenRow is what the model received of the answer rec holds (its first
// or last safe build result): the text, the structured result or both;
// how it was marked as an error; and what the host put before it.
func seenRow(rec *Record, first bool) string {
	if rec == nil {
		return "– (the lane did not run) | – | –"
	}
	if len(rec.Received) <= rec.SafeBuildFrom {
		return "nothing: no result reached the model | – | –"
	}
	res := rec.Received[len(rec.Received)-1]
	if first {
		res = rec.Received[rec.SafeBuildFrom]
	}
	t, j := textMark.FindStringIndex(res.Text), jsonMark.FindStringIndex(res.Text)
	form := "neither the text nor the structured result: `" + cell(cut(res.Text, leadBound)) + "`"
	start := len(res.Text)
	switch {
	case t != nil && j != nil:
		form, start = "the text and the structured result", min(t[0], j[0])
	case t != nil:
		form, start = "the text", t[0]
	case j != nil && strings.Contains(res.Text, `"outcome":"ok"`):
		form, start = "the structured result (an `ok` answer's text is that JSON too)", j[0]
	case j != nil:
		form, start = "the structured result (JSON)", j[0]
	}
	lead := strings.TrimSpace(res.Text[:start])
	marked := "no"
	switch {
	case res.IsError:
		marked = "`is_error: true`"
	case strings.Contains(strings.ToLower(lead), "error"):
		marked = "in words, before the result"
	}
	shown := "nothing"
	if lead != "" {
		shown = "`" + strings.ReplaceAll(cell(cut(lead, leadBound)), "`", "'") + "`"
	}
	return form + " | " + marked + " | " + shown
}

// toolSearchSeen says whether the model selected the tool with ToolSearch
// first in the run's lanes.
func toolSearchSeen(byScenario map[string]*Record) string {
	lanes, searched := 0, 0
	for _, r := range byScenario {
		lanes++
		if slices.Contains(r.Answers, "call ToolSearch") {
			searched++
		}
	}
	if searched == 0 {
		return ""
	}
	return fmt.Sprintf(" In %d of its %d lanes the model called `ToolSearch` before the safe build, and the host then offered the tool.", searched, lanes)
}

// resumeSeen says how the model of the long build's lane resumed its
// running build, from the record's resumed-to-result check.
func resumeSeen(rec *Record) string {
	if rec == nil {
		return "the long build's lane did not run."
	}
	var running []model.ToolResult
	for _, r := range rec.Received[min(rec.SafeBuildFrom, len(rec.Received)):] {
		if _, ok := model.RunningBuildID(r.Text); ok {
			running = append(running, r)
		}
	}
	where := "nowhere"
	if len(running) > 0 {
		where = "the structured result's `buildId`"
		if textMark.MatchString(running[0].Text) {
			where = "the text's first line (`build \"slow\": running after …; buildId …`)"
		}
	}
	verdict := "did not hold"
	for _, c := range rec.Checks {
		if c.Name == "resumed-to-result" && c.OK {
			verdict = "held"
		}
	}
	return fmt.Sprintf("with its tool timeout at %v and `init --answer-within %v`, the model got %d running answers, read the id in %s, "+
		"resumed %d times, and `resumed-to-result` %s.", LongBuild.ToolTimeout, LongBuild.AnswerWithin, len(running), where, len(rec.Resumes), verdict)
}

const seenIntro = `
## 6. What each host's model sees, and what its user must do

Per host, from the records of the run of section 3: what the host handed its model of each kind of
answer of ` + "`reclazz_safe_build`" + ` (the text, the structured result, or both), how it marked an error
and what it put before the result, how its model found the tool and resumed a running build; and
the steps the lanes take to run the host unattended, which its user takes too
(docs/hosts.md links each host here).
`
