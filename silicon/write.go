package silicon

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/simbench/simbench/plots"
)

// table is one of the report's tables, for any text format.
type table struct {
	title  string
	notes  []string
	header []string
	rows   [][]string
}

const missing = "–"

// tables are the report's tables, in order.
func (r *Report) tables() []table {
	out := []table{r.medianTable(), r.familyTable()}
	if len(r.Calibrated) > 0 {
		out = append(out, r.calibratedTable())
	}
	for p := range r.Predictions {
		if t := r.stageTable(p); len(t.rows) > 0 {
			out = append(out, t)
		}
	}
	out = append(out, r.calibrationTable())
	if len(r.Sweeps) > 0 {
		out = append(out, r.sweepTable(), r.heaviestTable())
	}
	return out
}

func pct(m Median) string {
	if m.Value == nil {
		return missing
	}
	return fmt.Sprintf("%.1f %%", *m.Value)
}

func signed(v *float64) string {
	if v == nil {
		return missing
	}
	return fmt.Sprintf("%+.1f", *v)
}

func (r *Report) medianTable() table {
	t := table{title: fmt.Sprintf("Median absolute error over %d stages of %d deployments", r.Stages, r.Deployments),
		header: []string{"prediction", "stages"}}
	if r.MaxRequests > 0 {
		t.notes = append(t.notes, fmt.Sprintf("Every stage replayed with %d measured requests, sent after a warmup that warms the prefix cache and drains first.", r.MaxRequests))
	}
	for _, m := range ReportMetrics {
		t.header = append(t.header, m.Name)
	}
	for _, p := range r.Predictions {
		row := []string{p.Name, fmt.Sprint(p.Stages)}
		for _, m := range p.Metrics {
			row = append(row, pct(m))
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// calibratedTable is every prediction on the calibrated prediction's
// stages: the a-priori and the calibrated errors side by side.
func (r *Report) calibratedTable() table {
	t := table{title: fmt.Sprintf("Median absolute error on the %d heavier stages of the load sweeps (the calibrated prediction's)", r.Calibrated[0].Stages),
		notes:  []string{"The calibrated prediction's target: within 10 / 5 / 5 % on TTFT / ITL / E2E."},
		header: []string{"prediction"}}
	for _, m := range ReportMetrics {
		t.header = append(t.header, m.Name)
	}
	for _, f := range Families() {
		t.header = append(t.header, f+" pooled")
	}
	for _, p := range r.Calibrated {
		row := []string{p.Name}
		for _, m := range append(slices.Clone(p.Metrics), p.Families...) {
			row = append(row, pct(m))
		}
		t.rows = append(t.rows, row)
	}
	return t
}

func (r *Report) familyTable() table {
	t := table{title: "Median absolute error per metric family (mean and percentiles of every stage pooled)",
		header: []string{"prediction"}}
	t.header = append(t.header, Families()...)
	for _, p := range r.Predictions {
		row := []string{p.Name}
		for _, m := range p.Families {
			row = append(row, pct(m))
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// stageTable is prediction p's signed errors on every stage it predicts.
func (r *Report) stageTable(p int) table {
	t := table{title: fmt.Sprintf("%s: signed error per stage, %% ((sim − real)/real)", r.Predictions[p].Name),
		header: []string{"stage"}}
	for _, m := range ReportMetrics {
		t.header = append(t.header, m.Name)
	}
	for _, s := range r.StageErrors {
		row, any := []string{s.Stage}, false
		for _, m := range s.Metrics {
			v := m.Predicted[p]
			any = any || v.Value != nil
			row = append(row, signed(v.ErrorPct))
		}
		if any {
			t.rows = append(t.rows, row)
		}
	}
	return t
}

func (r *Report) calibrationTable() table {
	t := table{title: "Calibration on each deployment's lightest stage",
		notes: []string{"Fitted from the lightest stage's aggregates (Little's law batch), as `simbench calibrate --real` fits " +
			"an aggregate-only run, its priors centred on the leave-one-deployment-out prior (no other figure of the deployment enters); " +
			"the fit then predicts the heavier stages. " +
			"A deployment with one stage has no calibrated prediction."},
		header: []string{"deployment", "calibrated on", "predicts", "pinned by the data"}}
	for _, c := range r.Calibration {
		if c.On == "" {
			t.rows = append(t.rows, []string{c.Deployment, missing, c.Note, missing})
			continue
		}
		var pinned, predicts []string
		for _, p := range c.Params {
			if p.Pinned {
				pinned = append(pinned, p.Name)
			}
		}
		for _, id := range c.Predicts {
			predicts = append(predicts, r.stageAt(c.Deployment, id))
		}
		t.rows = append(t.rows, []string{c.Deployment, r.stageAt(c.Deployment, c.On), strings.Join(predicts, ", "),
			orMissing(strings.Join(pinned, ", "))})
	}
	return t
}

// stageAt names stage id of deployment d briefly, with its rate: "s0 at
// 2.5 req/s".
func (r *Report) stageAt(d, id string) string {
	name := strings.TrimPrefix(id, d+"-")
	for _, s := range r.StageErrors {
		if s.Stage == id {
			return fmt.Sprintf("%s at %g req/s", name, s.Rate)
		}
	}
	return name
}

func orMissing(s string) string {
	if s == "" {
		return missing
	}
	return s
}

// predictionHeader is first, then one column per prediction, by key.
func (r *Report) predictionHeader(first ...string) []string {
	h := first
	for _, p := range r.Predictions {
		h = append(h, p.Key)
	}
	return h
}

// keyNote says what the predictions' keys stand for.
func (r *Report) keyNote() string {
	var parts []string
	for _, p := range r.Predictions {
		parts = append(parts, p.Key+": "+p.Name)
	}
	return strings.Join(parts, "; ") + "."
}

// throughputCell is a prediction's throughput and error, marked when the
// simulator saturates where the real server held.
func throughputCell(t Throughput) string {
	if t.Value == nil {
		return missing
	}
	s := fmt.Sprintf("%.2f", *t.Value)
	if t.ErrorPct != nil {
		s += fmt.Sprintf(" (%+.1f %%)", *t.ErrorPct)
	}
	if t.SaturatesWhereRealHeld {
		s += " SATURATES"
	}
	return s
}

func ratePtr(v *float64) string {
	if v == nil {
		return missing
	}
	return fmt.Sprintf("%.2f", *v)
}

func (r *Report) sweepTable() table {
	t := table{title: "Throughput of each load sweep (requests/s)",
		notes: []string{fmt.Sprintf("Measured: the published request throughput. Simulated: the steady completion rate of the measured requests. "+
			"SATURATES: the simulator completes under %.0f %% of the offered rate where the real server held it.", 100*holdFraction), r.keyNote()},
		header: r.predictionHeader("stage", "offered", "measured")}
	if r.MaxRequests > 0 {
		t.notes = append(t.notes, "A capped replay's measured requests start on an idle server (its warmup drains first, as AIPerf's): "+
			"their throughput is a transient's, not the steady state's. Replay every request (--max-requests 0) to judge saturation.")
	}
	for _, sw := range r.Sweeps {
		for _, st := range sw.Stages {
			row := []string{st.Stage, fmt.Sprintf("%.2f", st.Rate), ratePtr(st.Measured)}
			for _, p := range st.Predicted {
				row = append(row, throughputCell(p))
			}
			t.rows = append(t.rows, row)
		}
	}
	return t
}

func (r *Report) heaviestTable() table {
	t := table{title: "Throughput error at each sweep's heaviest stage, % ((sim − real)/real)",
		notes:  []string{"A missing error: the stage publishes no throughput. " + r.keyNote()},
		header: r.predictionHeader("deployment", "heaviest stage")}
	for _, sw := range r.Sweeps {
		h := sw.Heaviest()
		row := []string{sw.Deployment, r.stageAt(sw.Deployment, h.Stage)}
		for _, p := range h.Predicted {
			c := signed(p.ErrorPct)
			if p.SaturatesWhereRealHeld {
				c += " SATURATES"
			}
			row = append(row, c)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// WriteMarkdown writes the report's tables as markdown.
func (r *Report) WriteMarkdown(w io.Writer) error {
	return r.write(w, func(b *strings.Builder, t table) {
		fmt.Fprintf(b, "## %s\n\n", t.title)
		for _, n := range t.notes {
			b.WriteString(n + "\n\n")
		}
		b.WriteString("| " + strings.Join(t.header, " | ") + " |\n")
		for _, right := range t.numeric() {
			b.WriteString(map[bool]string{false: "|---", true: "|---:"}[right])
		}
		b.WriteString("|\n")
		for _, row := range t.rows {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	})
}

// WriteText writes the report's tables for a terminal: aligned columns,
// numbers right-aligned, notes wrapped.
func (r *Report) WriteText(w io.Writer) error {
	return r.write(w, func(b *strings.Builder, t table) {
		b.WriteString(t.title + "\n")
		for _, n := range t.notes {
			for _, line := range wrap(n, 100) {
				b.WriteString("  " + line + "\n")
			}
		}
		b.WriteString("\n")
		writeAligned(b, t)
	})
}

// write writes every table with one, a blank line between two.
func (r *Report) write(w io.Writer, one func(*strings.Builder, table)) error {
	var b strings.Builder
	for i, t := range r.tables() {
		if i > 0 {
			b.WriteString("\n")
		}
		one(&b, t)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// numeric says which of t's columns hold a number (or "–") in every row:
// those are right-aligned. The first column never is.
func (t table) numeric() []bool {
	right := make([]bool, len(t.header))
	for c := 1; c < len(t.header); c++ {
		right[c] = true
		for _, row := range t.rows {
			first, _ := utf8.DecodeRuneInString(row[c])
			right[c] = right[c] && (row[c] == missing || strings.ContainsRune("0123456789+-", first))
		}
	}
	return right
}

// writeAligned writes t's header and rows in columns: a column of numbers
// (or "–") right-aligned, any other left-aligned.
func writeAligned(b *strings.Builder, t table) {
	all := append([][]string{t.header}, t.rows...)
	widths := make([]int, len(t.header))
	for c := range t.header {
		for _, row := range all {
			widths[c] = max(widths[c], utf8.RuneCountInString(row[c]))
		}
	}
	right := t.numeric()
	for _, row := range all {
		var line strings.Builder
		for c, cell := range row {
			pad := strings.Repeat(" ", widths[c]-utf8.RuneCountInString(cell))
			if c > 0 {
				line.WriteString("  ")
			}
			if right[c] {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// wrap breaks s into lines of at most width runes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Figure is the report's predicted-against-measured figure: one panel per
// prediction (the in-sample one is not a prediction and is left out), one
// colour per metric family, one marker per statistic.
func (r *Report) Figure() (plots.PredictedFigure, error) {
	var panels []plots.PredictedPanel
	for p, pred := range r.Predictions {
		if pred.Key == inSampleKey {
			continue
		}
		pn := plots.PredictedPanel{Title: fmt.Sprintf("%s (%d stages)", pred.Name, pred.Stages)}
		shapes := map[string]int{}
		for m, met := range ReportMetrics {
			fam := slices.Index(Families(), met.Family())
			s := plots.PredictedSeries{Name: met.Name, Color: fam, Shape: shapes[met.Family()]}
			shapes[met.Family()]++
			for _, row := range r.StageErrors {
				mr := row.Metrics[m]
				if v := mr.Predicted[p].Value; mr.Measured != nil && v != nil {
					s.Measured, s.Predicted = append(s.Measured, *mr.Measured), append(s.Predicted, *v)
				}
			}
			pn.Series = append(pn.Series, s)
		}
		panels = append(panels, pn)
	}
	return plots.PredictedVsMeasured("ms", panels...)
}
