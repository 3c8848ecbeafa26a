package traces

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteText prints the description as simbench trace info does: one line
// per property, then ISL and OSL statistics in a table.
func (in Info) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "source\t%s\n", in.Source)
	fmt.Fprintf(tw, "digest\t%s\n", in.Digest)
	fmt.Fprintf(tw, "requests\t%d (%d warmup, %d with timestamps)\n", in.Requests, in.WarmupRequests, in.TimedRequests)
	fmt.Fprintf(tw, "sessions\t%d\n", in.Sessions)
	fmt.Fprintf(tw, "schedule\t%s\n", scheduleText(in))
	fmt.Fprintf(tw, "block size\t%d tokens\n", in.BlockSize)
	fmt.Fprintf(tw, "total tokens\tinput %d, output %d\n", in.TotalInputTokens, in.TotalOutputTokens)
	fmt.Fprintf(tw, "prefix reuse\t%.2f%% of input tokens (infinite prefix cache, %d-token blocks)\n",
		100*in.PrefixReuseRatio, in.BlockSize)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tokens\tmin\tp50\tp90\tp99\tmax\tavg\tstd\t")
	for _, row := range []struct {
		name string
		d    Dist
	}{{"ISL", in.ISL}, {"OSL", in.OSL}} {
		writeDistRow(tw, row.name, row.d)
	}
	if err := tw.Flush(); err != nil || in.Agentic == nil {
		return err
	}
	return in.Agentic.writeText(w)
}

// writeText prints the sessions' shapes: one row per distribution.
func (a *AgentInfo) writeText(w io.Writer) error {
	fmt.Fprintf(w, "\n%d multi-turn session(s):\n", a.Sessions)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "session\tmin\tp50\tp90\tp99\tmax\tavg\tstd\t")
	for _, row := range []struct {
		name string
		d    Dist
	}{{"turns", a.Turns}, {"depth", a.Depth}, {"fan-out", a.FanOut}, {"tool wait ms", a.ToolWaitMs}} {
		writeDistRow(tw, row.name, row.d)
	}
	if a.Continued == 0 {
		fmt.Fprintln(tw, "context growth\t–\t–\t–\t–\t–\t–\t–\t") // no turn continues another's context
	} else {
		writeDistRow(tw, "context growth", a.ContextGrowth)
	}
	return tw.Flush()
}

func writeDistRow(w io.Writer, name string, d Dist) {
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, num(d.Min), num(d.P50), num(d.P90),
		num(d.P99), num(d.Max), num(d.Avg), num(d.Std))
}

func scheduleText(in Info) string {
	switch {
	case in.TimedRequests == 0 && in.Concurrency > 0:
		return fmt.Sprintf("closed loop, no timestamps (concurrency %d)", in.Concurrency)
	case in.TimedRequests == 0:
		return "no timestamps: replay closed-loop with a concurrency"
	case in.SpanMs == 0:
		return "all requests at one instant"
	}
	span := fmt.Sprintf("span %s s, mean rate %.3f req/s", num(in.SpanMs/1000), in.RatePerSec)
	if in.TimedRequests >= 3 {
		span += fmt.Sprintf(", gaps' CV %.2f (Poisson 1, even 0)", in.GapCV)
	}
	if in.FirstMs > leadWarnMs {
		span += fmt.Sprintf("; the first request is due %s s after time zero (--auto-offset starts there)", num(in.FirstMs/1000))
	}
	return span
}

// num formats v with up to one decimal, without a trailing ".0".
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
