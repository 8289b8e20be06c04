package campaign

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a campaign's progress with an ETA on a terminal's stderr,
// through schollz/progressbar (which measures the terminal's width,
// throttles redraws and predicts the remaining time). When stderr is not a
// terminal (a CI log, a pipe) or --quiet is given it shows nothing: the
// final summary says how many runs were done. It lives in real time and
// only ever draws: no result depends on it.
type Progress struct {
	bar *progressbar.ProgressBar
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewProgress returns a progress display of total runs (-1: no known
// total, a spinner with the count) on w, or an inert one.
func NewProgress(w io.Writer, total int, label string, quiet bool) *Progress {
	if quiet || !IsTerminal(w) {
		return &Progress{}
	}
	bar := progressbar.NewOptions64(int64(total),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("runs"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionFullWidth(),
	)
	return &Progress{bar: bar}
}

// set shows n runs done and a note (the violating runs so far).
func (p *Progress) Set(n int, note string) {
	if p.bar == nil {
		return
	}
	if note != "" {
		p.bar.Describe(note)
	}
	_ = p.bar.Set(n)
}

// add counts one more run.
func (p *Progress) Add() {
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// done removes the bar.
func (p *Progress) Done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}
