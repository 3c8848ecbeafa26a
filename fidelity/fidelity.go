// Package fidelity tabulates how well simulated runs predict real ones
// beside the real runs' own run-to-run spread: a sim-vs-real error means
// little without the real-vs-real difference of the same workload next to
// it. One table holds several workloads (held-out loads, prompt lengths, a
// trace slice), several candidate configurations (say calibrated and
// uncalibrated) and, where a workload was run twice on silicon, the
// difference between those two runs.
package fidelity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/simbench/simbench/results"
)

// Field is one metric statistic of the table.
type Field struct{ Metric, Stat string }

// DefaultFields are TTFT, ITL and request latency at avg, p50 and p99.
var DefaultFields = []Field{
	{results.TagTTFT, "avg"}, {results.TagTTFT, "p50"}, {results.TagTTFT, "p99"},
	{results.TagITL, "avg"}, {results.TagITL, "p50"}, {results.TagITL, "p99"},
	{results.TagRequestLatency, "avg"}, {results.TagRequestLatency, "p50"}, {results.TagRequestLatency, "p99"},
}

// Candidate is one configuration's prediction of a workload: its simulated
// runs, one per simulator seed. A field's prediction is the median over the
// runs, as compare's several-runs mode takes it: a simulator that draws the
// order of simultaneous sends and each step's jitter gives one sample of
// its prediction per seed, and a trace's few short-output requests, first
// or last in a burst by that draw, move its ITL average by tens of percent
// from seed to seed.
type Candidate struct {
	Name string
	Runs []*results.Profile
}

// value is the median of the runs' values of metric.stat; false when no
// run has a finite one.
func (c Candidate) value(metric, stat string) (float64, bool) {
	v, n := results.MedianValue(c.Runs, metric, stat)
	return v, n > 0
}

// Workload is one workload's real run, its optional repeat on silicon and
// the simulated candidates.
type Workload struct {
	Name       string
	Real       *results.Profile
	Repeat     *results.Profile // nil: run once
	Candidates []Candidate
}

// Cell is one workload's field: the real value, each candidate's signed
// error % ((sim − real)/real × 100, sim the median over its runs), with
// several runs their range of errors [min, max], and, with a repeat, the
// real-vs-real difference % ((repeat − real)/real × 100).
type Cell struct {
	Workload      string                `json:"workload"`
	Metric        string                `json:"metric"`
	Stat          string                `json:"stat"`
	Real          float64               `json:"real"`
	ErrorPct      map[string]float64    `json:"error_pct"`
	ErrorRangePct map[string][2]float64 `json:"error_range_pct,omitempty"`
	SpreadPct     *float64              `json:"real_vs_real_pct,omitempty"`
}

// Summary is one candidate's figures over all cells; Runs is the fewest
// simulated runs any of its workloads had.
type Summary struct {
	Candidate       string  `json:"candidate"`
	Runs            int     `json:"runs"`
	MedianAbsPct    float64 `json:"median_abs_error_pct"`
	WorstAvgAbsPct  float64 `json:"worst_avg_abs_error_pct"`
	Cells           int     `json:"cells"`
	WithinNoiseRule bool    `json:"within_noise_rule"` // median ≤ NoiseMultiple × noise floor
	WithinAvgLimit  bool    `json:"within_avg_limit"`  // worst avg field ≤ AvgLimitPct
}

// Table is the fidelity table.
type Table struct {
	Candidates []string  `json:"candidates"`
	Cells      []Cell    `json:"cells"`
	Summaries  []Summary `json:"summaries"`
	// SpreadMedianPct is the median |real-vs-real| difference over the
	// cells with a repeat, as measured; NoiseFloorPct is it taken as at
	// least MinNoisePct. Both 0 when nothing was repeated.
	SpreadMedianPct float64 `json:"real_vs_real_median_pct"`
	NoiseFloorPct   float64 `json:"noise_floor_pct"`
	NoiseMultiple   float64 `json:"noise_multiple"`
	Repeats         int     `json:"repeated_cells"`
	// Capacities are the load sweeps' SLO capacities, reported beside
	// the cells and left out of the summaries (one figure per sweep, on
	// a scale of its own).
	Capacities []CapacityRow `json:"capacity,omitempty"`
	// Drift is how far silicon itself moved over the table (AddDrift).
	Drift *Drift `json:"host_drift,omitempty"`
}

// CapacitySweep is one load sweep's SLO capacity estimate on silicon
// and on each candidate configuration (absent: no estimate, e.g. its
// lowest load already failed the SLO). RealStatus says why silicon has
// none when Real is nil.
type CapacitySweep struct {
	Workload   string
	Load       string // concurrency or request_rate
	SLO        string // in words, for the note under the table
	Real       *float64
	RealStatus string
	Candidates map[string]float64
}

// CapacityRow is a sweep's capacity row: the real estimate and each
// candidate's signed error % (none without a real estimate).
type CapacityRow struct {
	Workload   string             `json:"workload"`
	Load       string             `json:"load"`
	SLO        string             `json:"slo"`
	Real       *float64           `json:"real"`
	RealStatus string             `json:"real_status,omitempty"`
	ErrorPct   map[string]float64 `json:"error_pct"`
}

// AddCapacity adds a sweep's capacity row; a real estimate that is not
// positive and finite is refused.
func (t *Table) AddCapacity(c CapacitySweep) error {
	if c.Real != nil && (!(*c.Real > 0) || !finite(*c.Real)) {
		return fmt.Errorf("fidelity: %s: real capacity %v: want a positive estimate", c.Workload, *c.Real)
	}
	row := CapacityRow{Workload: c.Workload, Load: c.Load, SLO: c.SLO, Real: c.Real, RealStatus: c.RealStatus, ErrorPct: map[string]float64{}}
	for name, v := range c.Candidates {
		if finite(v) && c.Real != nil {
			row.ErrorPct[name] = (v - *c.Real) / *c.Real * 100
		}
	}
	t.Capacities = append(t.Capacities, row)
	return nil
}

// DriftRun is a workload run on silicon before the predicted workloads and
// again after them, such as a calibration plan's run repeated at the end.
type DriftRun struct {
	Name          string
	Before, After *results.Profile
}

// Drift is the difference of the DriftRuns' two runs: how far the host
// itself moved while the workloads between them ran, which a simulator
// fitted on one side of it cannot know. It stays out of the noise floor,
// which is the spread of the predicted workloads' own repeats.
type Drift struct {
	// Cells' Real is the run before, SpreadPct the run after's difference
	// % ((after − before)/before × 100); ErrorPct is empty.
	Cells        []Cell  `json:"cells"`
	MedianAbsPct float64 `json:"median_abs_pct"`
	// WorstAvgAbsPct is the largest |difference| of an avg field, in
	// WorstAvg's workload and metric.
	WorstAvgAbsPct float64 `json:"worst_avg_abs_pct"`
	WorstAvg       string  `json:"worst_avg"`
}

// AddDrift tabulates runs over fields (DefaultFields when nil) as the
// table's host drift; a run without a finite value on both sides leaves
// that field out.
func (t *Table) AddDrift(runs []DriftRun, fields []Field) {
	if fields == nil {
		fields = DefaultFields
	}
	d := &Drift{}
	var abs []float64
	for _, r := range runs {
		for _, f := range fields {
			c, ok := buildCell(Workload{Name: r.Name, Real: r.Before, Repeat: r.After}, f)
			if !ok || c.SpreadPct == nil {
				continue
			}
			d.Cells = append(d.Cells, c)
			a := math.Abs(*c.SpreadPct)
			abs = append(abs, a)
			if f.Stat == "avg" && a > d.WorstAvgAbsPct {
				d.WorstAvgAbsPct, d.WorstAvg = a, r.Name+" "+f.Metric
			}
		}
	}
	if len(abs) == 0 {
		return
	}
	d.MedianAbsPct = median(abs)
	t.Drift = d
}

// The noise rule: a candidate is as good as silicon's own spread allows
// when its median |error| is at most NoiseMultiple times the median
// real-vs-real difference, which is taken as at least MinNoisePct. The
// avg limit: no avg field's |error| beyond AvgLimitPct, however small the
// median (a fidelity target states both).
const (
	NoiseMultiple = 1.5
	MinNoisePct   = 5
	AvgLimitPct   = 25
)

// Build tabulates ws over fields (DefaultFields when nil).
func Build(ws []Workload, fields []Field) *Table {
	if fields == nil {
		fields = DefaultFields
	}
	t := &Table{NoiseMultiple: NoiseMultiple}
	runs := map[string]int{}
	for _, w := range ws {
		for _, c := range w.Candidates {
			if !slices.Contains(t.Candidates, c.Name) {
				t.Candidates = append(t.Candidates, c.Name)
				runs[c.Name] = len(c.Runs)
			}
			runs[c.Name] = min(runs[c.Name], len(c.Runs))
		}
		for _, f := range fields {
			if cell, ok := buildCell(w, f); ok {
				t.Cells = append(t.Cells, cell)
			}
		}
	}
	t.summarise(runs)
	return t
}

func buildCell(w Workload, f Field) (Cell, bool) {
	real, ok := w.Real.Value(f.Metric, f.Stat)
	if !ok || real == 0 || !finite(real) {
		return Cell{}, false
	}
	c := Cell{Workload: w.Name, Metric: f.Metric, Stat: f.Stat, Real: real, ErrorPct: map[string]float64{}}
	for _, cand := range w.Candidates {
		v, ok := cand.value(f.Metric, f.Stat)
		if !ok {
			continue
		}
		c.ErrorPct[cand.Name] = (v - real) / real * 100
		if lo, hi, n := errorRange(cand.Runs, f, real); n > 1 {
			if c.ErrorRangePct == nil {
				c.ErrorRangePct = map[string][2]float64{}
			}
			c.ErrorRangePct[cand.Name] = [2]float64{lo, hi}
		}
	}
	if w.Repeat != nil {
		if v, ok := w.Repeat.Value(f.Metric, f.Stat); ok && finite(v) {
			d := (v - real) / real * 100
			c.SpreadPct = &d
		}
	}
	return c, true
}

// errorRange is the smallest and largest error % of the runs' values, and
// how many runs have one.
func errorRange(runs []*results.Profile, f Field, real float64) (lo, hi float64, n int) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range runs {
		if v, ok := p.Value(f.Metric, f.Stat); ok && finite(v) {
			e := (v - real) / real * 100
			lo, hi, n = min(lo, e), max(hi, e), n+1
		}
	}
	return lo, hi, n
}

func (t *Table) summarise(runs map[string]int) {
	var spreads []float64
	for _, c := range t.Cells {
		if c.SpreadPct != nil {
			spreads = append(spreads, math.Abs(*c.SpreadPct))
		}
	}
	t.Repeats = len(spreads)
	if len(spreads) > 0 {
		t.SpreadMedianPct = median(spreads)
		t.NoiseFloorPct = max(t.SpreadMedianPct, MinNoisePct)
	}
	for _, name := range t.Candidates {
		s := Summary{Candidate: name, Runs: runs[name]}
		var abs []float64
		for _, c := range t.Cells {
			e, ok := c.ErrorPct[name]
			if !ok {
				continue
			}
			abs = append(abs, math.Abs(e))
			if c.Stat == "avg" {
				s.WorstAvgAbsPct = max(s.WorstAvgAbsPct, math.Abs(e))
			}
		}
		s.Cells = len(abs)
		if len(abs) > 0 {
			s.MedianAbsPct = median(abs)
		}
		s.WithinNoiseRule = t.NoiseFloorPct > 0 && s.Cells > 0 && s.MedianAbsPct <= t.NoiseMultiple*t.NoiseFloorPct
		s.WithinAvgLimit = s.Cells > 0 && s.WorstAvgAbsPct <= AvgLimitPct
		t.Summaries = append(t.Summaries, s)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return results.PercentileSorted(s, 50)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// WriteJSON writes the table as indented JSON.
func (t *Table) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

// WriteText writes the table: one line per workload and field with each
// candidate's error and the real-vs-real difference, then the summaries.
func (t *Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	ranged := t.rangedCandidates()
	fmt.Fprint(tw, "workload\tmetric\tstat\treal\t")
	for _, c := range t.Candidates {
		fmt.Fprintf(tw, "%s err %%\t", c)
		if ranged[c] {
			fmt.Fprintf(tw, "%s runs %%\t", c)
		}
	}
	fmt.Fprintln(tw, "real-vs-real %\t")
	for _, c := range t.Cells {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t", c.Workload, c.Metric, c.Stat, c.Real)
		for _, name := range t.Candidates {
			fmt.Fprintf(tw, "%s\t", pct(c.ErrorPct, name))
			if ranged[name] {
				fmt.Fprintf(tw, "%s\t", span(c.ErrorRangePct, name))
			}
		}
		if c.SpreadPct != nil {
			fmt.Fprintf(tw, "%+.2f\t\n", *c.SpreadPct)
		} else {
			fmt.Fprint(tw, "–\t\n")
		}
	}
	for _, c := range t.Capacities {
		real := "–"
		if c.Real != nil {
			real = fmt.Sprintf("%.3f", *c.Real)
		}
		fmt.Fprintf(tw, "%s\tcapacity\t%s\t%s\t", c.Workload, c.Load, real)
		for _, name := range t.Candidates {
			fmt.Fprintf(tw, "%s\t", pct(c.ErrorPct, name))
			if ranged[name] {
				fmt.Fprint(tw, "–\t")
			}
		}
		fmt.Fprint(tw, "–\t\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range t.Capacities {
		fmt.Fprintf(w, "\n%s capacity: the SLO capacity estimate of the load sweep (%s), reported, not in the summaries\n", c.Workload, c.SLO)
		if c.Real == nil {
			fmt.Fprintf(w, "  no estimate on silicon: %s\n", c.RealStatus)
		}
	}
	if t.Repeats > 0 {
		fmt.Fprintf(w, "\nnoise floor %.2f %%: median |real-vs-real| %.2f %% over %d repeated cells, at least %g %%; rules: median |error| ≤ %g × floor = %.2f %%, no avg field beyond %g %%\n",
			t.NoiseFloorPct, t.SpreadMedianPct, t.Repeats, float64(MinNoisePct), t.NoiseMultiple, t.NoiseMultiple*t.NoiseFloorPct, float64(AvgLimitPct))
	} else {
		fmt.Fprintln(w, "\nno workload was run twice on silicon: errors have no noise floor beside them")
	}
	for _, s := range t.Summaries {
		runs := ""
		if s.Runs > 1 {
			runs = fmt.Sprintf(", of the median of %d simulated runs (seeds) per workload", s.Runs)
		}
		fmt.Fprintf(w, "%s: median |error| %.2f %% over %d cells%s, worst avg field %.2f %% (%s)\n",
			s.Candidate, s.MedianAbsPct, s.Cells, runs, s.WorstAvgAbsPct, t.verdict(s))
	}
	if t.Drift != nil {
		return t.Drift.writeText(w)
	}
	return nil
}

// verdict says which of the two rules s meets.
func (t *Table) verdict(s Summary) string {
	if s.Cells == 0 {
		return "no cells"
	}
	median := "median: no noise floor"
	switch {
	case t.Repeats > 0 && s.WithinNoiseRule:
		median = "median within the noise rule"
	case t.Repeats > 0:
		median = "median outside the noise rule"
	}
	if s.WithinAvgLimit {
		return fmt.Sprintf("%s; every avg field within %g %%", median, float64(AvgLimitPct))
	}
	return fmt.Sprintf("%s; an avg field beyond %g %%", median, float64(AvgLimitPct))
}

// writeText writes the drift's cells, one line per run and metric with
// its stats side by side, and its summary line.
func (d *Drift) writeText(w io.Writer) error {
	fmt.Fprintln(w, "\nhost drift: the same runs on silicon before the predicted workloads and after them, (after − before)/before %")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for i := 0; i < len(d.Cells); {
		c := d.Cells[i]
		fmt.Fprintf(tw, "%s\t%s\t", c.Workload, c.Metric)
		for ; i < len(d.Cells) && d.Cells[i].Workload == c.Workload && d.Cells[i].Metric == c.Metric; i++ {
			fmt.Fprintf(tw, "%s %+.2f\t", d.Cells[i].Stat, *d.Cells[i].SpreadPct)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "host drift: median |after − before| %.2f %% over %d cells, worst avg field %.2f %% (%s)\n",
		d.MedianAbsPct, len(d.Cells), d.WorstAvgAbsPct, d.WorstAvg)
	return err
}

// rangedCandidates are the candidates with several runs somewhere: their
// range of errors gets a column.
func (t *Table) rangedCandidates() map[string]bool {
	r := map[string]bool{}
	for _, c := range t.Cells {
		for name := range c.ErrorRangePct {
			r[name] = true
		}
	}
	return r
}

func span(m map[string][2]float64, name string) string {
	if v, ok := m[name]; ok {
		return fmt.Sprintf("%+.1f…%+.1f", v[0], v[1])
	}
	return "–"
}

func pct(m map[string]float64, name string) string {
	if v, ok := m[name]; ok {
		return fmt.Sprintf("%+.2f", v)
	}
	return "–"
}
