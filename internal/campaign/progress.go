package campaign

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/locksim/locksim/internal/termsafe"
	"golang.org/x/term"
)

// progress shows a campaign's progress with an ETA on a terminal's stderr,
// through schollz/progressbar (which measures the terminal's width,
// throttles redraws and predicts the remaining time). When stderr is not a
// terminal (a CI log, a pipe) it prints a plain line every LogEvery
// instead (issue 25: a long fuzz --time in CI printed nothing until the
// end); with --quiet it shows nothing: the final summary says how many
// runs were done. It lives in real time and only ever draws: no result
// depends on it.
type Progress struct {
	bar *progressbar.ProgressBar
	// The plain lines of a non-terminal: the writer, the label, the
	// total, when the campaign began and the last line was printed.
	mu          sync.Mutex
	log         io.Writer
	label       string
	total       int
	start, last time.Time
	now         func() time.Time
	added       int // runs counted by Add
	// The end of a --time campaign (zero: none), the source of its time
	// left; the description of a terminal bar and when it was last set.
	deadline  time.Time
	desc      string
	described time.Time
}

// LogEvery is the interval between two progress lines on a non-terminal.
const LogEvery = 5 * time.Second

// IsTerminal reports whether w is a terminal (or escapes what it writes
// to one: termsafe.Writer).
func IsTerminal(w io.Writer) bool {
	f, ok := termsafe.Raw(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewProgress returns a progress display of total runs (-1: no known
// total, a spinner with the count) on w, or an inert one.
func NewProgress(w io.Writer, total int, label string, quiet bool) *Progress {
	if quiet {
		return &Progress{}
	}
	if !IsTerminal(w) {
		return newLogProgress(w, total, label, time.Now)
	}
	// The rate and the time left are progress's own (status): the bar's
	// said "0 runs/hr" before the first run and nothing left for --time.
	// The bar draws with control sequences of its own: it writes to the
	// terminal itself, not through the escaping writer.
	bar := progressbar.NewOptions64(int64(total),
		progressbar.OptionSetWriter(termsafe.Raw(w)),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionFullWidth(),
	)
	t := time.Now()
	return &Progress{bar: bar, label: label, desc: label, total: total, start: t, now: time.Now}
}

// Until gives the end of a --time campaign, from which the progress says
// the time left.
func (p *Progress) Until(deadline time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deadline = deadline
}

// status is the rate and the time left after n runs at t, in parentheses:
// no rate before there is one (no run done, or less than a second), the
// time left from the deadline of a --time campaign, else from the rate and
// the total; empty when there is neither.
func (p *Progress) status(n int, t time.Time) string {
	var parts []string
	elapsed := t.Sub(p.start)
	var rate float64
	if n > 0 && elapsed >= time.Second {
		rate = float64(n) / elapsed.Seconds()
		if rate >= 10 {
			parts = append(parts, fmt.Sprintf("%.0f runs/s", rate))
		} else {
			parts = append(parts, fmt.Sprintf("%.1f runs/s", rate))
		}
	}
	switch {
	case !p.deadline.IsZero():
		parts = append(parts, fmt.Sprintf("about %s left", max(p.deadline.Sub(t), 0).Round(time.Second)))
	case rate > 0 && p.total > n:
		left := time.Duration(float64(p.total-n) / rate * float64(time.Second))
		parts = append(parts, fmt.Sprintf("about %s left", left.Round(time.Second)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// describe sets a terminal bar's description to the label (or note) and
// the status, at most every 200 ms.
func (p *Progress) describe(n int, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	if note != "" {
		p.desc = note
	}
	if t.Sub(p.described) < 200*time.Millisecond {
		return
	}
	p.described = t
	p.bar.Describe(p.desc + p.status(n, t))
}

// newLogProgress prints a line every LogEvery on w, reading the time with
// now (tests give a fake clock).
func newLogProgress(w io.Writer, total int, label string, now func() time.Time) *Progress {
	t := now()
	return &Progress{log: w, label: label, total: total, start: t, last: t, now: now}
}

// logLine prints a progress line when LogEvery passed since the last one.
func (p *Progress) logLine(n int, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	if t.Sub(p.last) < LogEvery {
		return
	}
	p.last = t
	elapsed := t.Sub(p.start)
	line := fmt.Sprintf("%s: %d runs", p.label, n)
	if p.total > 0 {
		line += fmt.Sprintf(" of %d", p.total)
	}
	line += fmt.Sprintf(" in %s", elapsed.Round(time.Second)) + p.status(n, t)
	if note != "" {
		line += "; " + note
	}
	fmt.Fprintln(p.log, line)
}

// set shows n runs done and a note (the violating runs so far).
func (p *Progress) Set(n int, note string) {
	if p.log != nil {
		p.logLine(n, note)
		return
	}
	if p.bar == nil {
		return
	}
	p.describe(n, note)
	_ = p.bar.Set(n)
}

// add counts one more run.
func (p *Progress) Add() {
	if p.log != nil {
		p.mu.Lock()
		p.added++
		n := p.added
		p.mu.Unlock()
		p.logLine(n, "")
		return
	}
	if p.bar != nil {
		_ = p.bar.Add(1)
		p.describe(int(p.bar.State().CurrentNum), "")
	}
}

// done removes the bar.
func (p *Progress) Done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}
