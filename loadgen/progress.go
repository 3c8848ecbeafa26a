package loadgen

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// ProgressPrinter renders Progress snapshots on w: a bar redrawn in place
// when w is a terminal, one plain line per call otherwise.
type ProgressPrinter struct {
	W     io.Writer
	TTY   bool
	Width int // bar width in cells; 0 = 30
	last  int // length of the last bar line, to blank it
}

// Print renders one snapshot.
func (pp *ProgressPrinter) Print(p Progress) {
	line := progressLine(p)
	if !pp.TTY {
		fmt.Fprintf(pp.W, "progress: %s\n", line)
		return
	}
	bar := pp.bar(p)
	text := fmt.Sprintf("%s %s", bar, line)
	pad := max(pp.last-len(text), 0)
	pp.last = len(text)
	fmt.Fprintf(pp.W, "\r%s%s", text, strings.Repeat(" ", pad))
	if p.Final {
		fmt.Fprintln(pp.W)
	}
}

func (pp *ProgressPrinter) bar(p Progress) string {
	width := pp.Width
	if width <= 0 {
		width = 30
	}
	filled := 0
	if p.Total > 0 {
		filled = min(int(float64(width)*float64(p.Done)/float64(p.Total)), width)
	}
	return "[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "]"
}

// progressLine is done / in flight / errors / achieved rate / ETA.
func progressLine(p Progress) string {
	secs := p.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(p.Done) / secs
	}
	eta := "?"
	switch left := int64(p.Total) - p.Done; {
	case p.Duration > 0:
		eta = max(p.Duration-p.Elapsed, 0).Round(time.Second).String()
	case left <= 0:
		eta = "0s"
	case rate > 0:
		eta = time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%d/%d done, %d in flight, %d errors, %.1f req/s, elapsed %.1fs, ETA %s",
		p.Done, p.Total, p.InFlight, p.Errors, rate, secs, eta)
}
