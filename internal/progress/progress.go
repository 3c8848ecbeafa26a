// Package progress draws a run's progress on standard error, for both real
// runs (loadgen) and simulated ones (sim): a bar redrawn in place on a
// terminal, one plain line per update elsewhere. Whether to show it at all,
// and how often to update it, is the caller's choice.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

const (
	// barWidth is the bar's width in cells (narrower when the terminal is).
	barWidth = 30
	// redrawEvery is the shortest time between two redraws of the bar.
	redrawEvery = 100 * time.Millisecond
)

// Bar renders progress snapshots on w. On a terminal it is a
// github.com/schollz/progressbar/v3 bar followed by the snapshot's text,
// redrawn at most every 100 ms; elsewhere each snapshot is one
// "progress: TEXT" line. A Bar is used from one goroutine at a time.
type Bar struct {
	w    io.Writer
	tty  bool
	now  func() time.Time
	bar  *progressbar.ProgressBar // created at a line's first update on a terminal
	last time.Time                // when the bar was last drawn
	open bool                     // a bar line is drawn and not yet ended
}

// New returns a Bar on w; tty says whether w is a terminal (IsTerminal).
func New(w io.Writer, tty bool) *Bar {
	return &Bar{w: w, tty: tty, now: time.Now}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Update draws done of total with text beside it. On a terminal, an update
// within 100 ms of the last drawn one is skipped unless it is full (done ≥
// total) or final; a final update ends the bar's line.
func (b *Bar) Update(done, total int64, text string, final bool) {
	if !b.tty {
		fmt.Fprintf(b.w, "progress: %s\n", text)
		return
	}
	if b.open && !final && done < total && b.now().Sub(b.last) < redrawEvery {
		return
	}
	b.draw(done, total, text)
	if final {
		b.Finish()
	}
}

// Finish ends the bar's line on a terminal, if one is drawn.
func (b *Bar) Finish() {
	if b.open {
		fmt.Fprintln(b.w)
		b.open = false
	}
}

func (b *Bar) draw(done, total int64, text string) {
	total = max(total, 1)
	if !b.open {
		b.bar = newBar(b.w, total, text)
	} else if b.bar.GetMax64() != total {
		b.bar.ChangeMax64(total)
	}
	// Set64 redraws when the percentage changes and Describe always does:
	// the bar only fails for a maximum ≤ 0 or a count past it, which the
	// clamps rule out, and drawing progress never fails a run.
	_ = b.bar.Set64(min(max(done, 0), total))
	b.bar.Describe(text)
	b.last, b.open = b.now(), true
}

func newBar(w io.Writer, total int64, text string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(text),
		progressbar.OptionSetWidth(barWidth),
		progressbar.OptionSetTheme(progressbar.Theme{Saucer: "=", SaucerPadding: " ", BarStart: "[", BarEnd: "]"}),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
	)
}
