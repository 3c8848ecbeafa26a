package servermetrics

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// AdditivityTolerance is how far the stage means may add up from the TTFT
// mean (relative) for a breakdown to count as additive.
const AdditivityTolerance = 0.01

// TTFTBreakdown is where the time to first token went, from a server's
// histograms over the run window: the mean of each stage (Δsum/Δcount) and
// its share of the TTFT mean. Means add up; percentiles never do.
type TTFTBreakdown struct {
	Server     string           `json:"server"`
	TTFTFamily string           `json:"ttft_family"`
	TTFTMeanMs float64          `json:"ttft_mean_ms"`
	TTFTCount  float64          `json:"ttft_count"`
	Stages     []BreakdownStage `json:"stages"`
	StageSumMs float64          `json:"stage_sum_ms"`
	Additive   bool             `json:"additive"`
	// Reason says why the stages do not add up to TTFT (empty when they do).
	Reason string `json:"reason,omitempty"`
}

// BreakdownStage is one stage of a TTFT breakdown, labelled as the server
// labels it.
type BreakdownStage struct {
	Stage  string  `json:"stage"`
	Phase  string  `json:"phase"`
	MeanMs float64 `json:"mean_ms"`
	Share  float64 `json:"share"`
	Count  float64 `json:"count"`
}

// Key identifies a stage across runs.
func (s BreakdownStage) Key() string {
	if s.Phase == "" {
		return s.Stage
	}
	return s.Stage + "/" + s.Phase
}

// TTFTBreakdowns computes every breakdown the export supports, best source
// first (Dynamo's exclusive stages, then vLLM's, then SGLang's).
func TTFTBreakdowns(e *Export) []*TTFTBreakdown {
	var out []*TTFTBreakdown
	for _, src := range breakdownSources() {
		if b := breakdownFrom(e, src); b != nil {
			out = append(out, b)
		}
	}
	return out
}

// sumCount adds up Δcount and Δsum over a family's series, optionally only
// those a filter keeps; instances is the number of endpoints seen.
type sumCount struct {
	count, sum float64
	endpoints  map[string]bool
}

func (sc *sumCount) add(s *SeriesStats) {
	c, _ := s.Stat("count")
	sum, _ := s.Stat("sum")
	sc.count += c
	sc.sum += sum
	if sc.endpoints == nil {
		sc.endpoints = map[string]bool{}
	}
	sc.endpoints[s.EndpointURL] = true
}

func (sc *sumCount) meanMs() float64 { return 1000 * sc.sum / sc.count }

func familyTotal(e *Export, family string) (sumCount, bool) {
	m, ok := e.Metrics[family]
	if !ok || m.Type != KindHistogram {
		return sumCount{}, false
	}
	var sc sumCount
	for i := range m.Series {
		sc.add(&m.Series[i])
	}
	return sc, true
}

func breakdownFrom(e *Export, src breakdownSource) *TTFTBreakdown {
	ttft, ok := familyTotal(e, src.TTFTFamily)
	if !ok || ttft.count <= 0 || ttft.sum <= 0 || !finite(ttft.sum) {
		return nil // nothing observed, or no time to break down
	}
	b := &TTFTBreakdown{Server: src.Server, TTFTFamily: src.TTFTFamily, TTFTMeanMs: ttft.meanMs(), TTFTCount: ttft.count}
	stages, counts := stageTotals(e, src)
	if len(stages) == 0 {
		return nil
	}
	for _, st := range stages {
		sc := counts[st.Key()]
		if sc.count <= 0 {
			continue
		}
		st.MeanMs, st.Count = sc.meanMs(), sc.count
		st.Share = st.MeanMs / b.TTFTMeanMs
		b.Stages = append(b.Stages, st)
		b.StageSumMs += st.MeanMs
	}
	if len(b.Stages) == 0 {
		return nil
	}
	b.Additive, b.Reason = additivity(b, src, ttft, counts)
	return b
}

// stageTotals groups a source's stage series by stage (and phase), in
// attribution order.
func stageTotals(e *Export, src breakdownSource) ([]BreakdownStage, map[string]*sumCount) {
	counts := map[string]*sumCount{}
	var stages []BreakdownStage
	add := func(st BreakdownStage, s *SeriesStats) {
		sc, ok := counts[st.Key()]
		if !ok {
			sc = &sumCount{}
			counts[st.Key()] = sc
			stages = append(stages, st)
		}
		sc.add(s)
	}
	if src.StageFamily != "" {
		if m, ok := e.Metrics[src.StageFamily]; ok && m.Type == KindHistogram {
			for i := range m.Series {
				s := &m.Series[i]
				add(BreakdownStage{Stage: s.Labels[src.StageLabel], Phase: s.Labels[src.PhaseLabel]}, s)
			}
		}
		sortStages(stages)
		return stages, counts
	}
	for _, sf := range src.Stages {
		if m, ok := e.Metrics[sf.Family]; ok && m.Type == KindHistogram {
			for i := range m.Series {
				add(BreakdownStage{Stage: sf.Stage}, &m.Series[i])
			}
		}
	}
	return stages, counts
}

func sortStages(stages []BreakdownStage) {
	rank := func(list []string, v string) int {
		if i := slices.Index(list, v); i >= 0 {
			return i
		}
		return len(list)
	}
	slices.SortStableFunc(stages, func(a, b BreakdownStage) int {
		return cmp.Or(cmp.Compare(rank(dynamoStageOrder, a.Stage), rank(dynamoStageOrder, b.Stage)),
			strings.Compare(a.Stage, b.Stage),
			cmp.Compare(rank(phaseOrder, a.Phase), rank(phaseOrder, b.Phase)),
			strings.Compare(a.Phase, b.Phase))
	})
}

// additivity checks that the stage means add up to the TTFT mean within
// AdditivityTolerance and, when they do not, says why.
func additivity(b *TTFTBreakdown, src breakdownSource, ttft sumCount, counts map[string]*sumCount) (bool, string) {
	diff := b.StageSumMs - b.TTFTMeanMs
	if math.Abs(diff) <= AdditivityTolerance*b.TTFTMeanMs {
		return true, ""
	}
	why := []string{fmt.Sprintf("stage means add up to %.3f ms but the TTFT mean is %.3f ms (%+.1f%%)",
		b.StageSumMs, b.TTFTMeanMs, 100*diff/b.TTFTMeanMs)}
	if !src.Exclusive {
		why = append(why, src.Uncovered)
	}
	var mixed []string
	for _, st := range b.Stages {
		if c := counts[st.Key()].count; c != ttft.count {
			mixed = append(mixed, fmt.Sprintf("%s has %g observations", st.Key(), c))
		}
	}
	if len(mixed) > 0 {
		why = append(why, fmt.Sprintf("cohorts mixed: TTFT has %g observations but %s (requests without a first token, stages recorded for some requests only, or a restart)",
			ttft.count, strings.Join(mixed, ", ")))
	}
	if n := len(ttft.endpoints); n > 1 {
		why = append(why, fmt.Sprintf("instances mixed: TTFT comes from %d endpoints", n))
	}
	for _, st := range b.Stages {
		if sc := counts[st.Key()]; len(sc.endpoints) != len(ttft.endpoints) {
			why = append(why, fmt.Sprintf("instances mixed: stage %s comes from %d endpoints, TTFT from %d",
				st.Key(), len(sc.endpoints), len(ttft.endpoints)))
			break
		}
	}
	return false, strings.Join(why, "; ")
}

// WriteTTFTBreakdownJSON writes b as ttft_breakdown.json (indent 2).
func WriteTTFTBreakdownJSON(w io.Writer, b *TTFTBreakdown) error {
	out := *b
	out.Stages = slices.Clone(b.Stages)
	if out.Stages == nil {
		out.Stages = []BreakdownStage{}
	}
	for _, f := range []*float64{&out.TTFTMeanMs, &out.StageSumMs, &out.TTFTCount} {
		if !finite(*f) {
			return fmt.Errorf("ttft breakdown: non-finite value")
		}
	}
	for i := range out.Stages {
		if !finite(out.Stages[i].MeanMs) || !finite(out.Stages[i].Share) {
			return fmt.Errorf("ttft breakdown: stage %s: non-finite value", out.Stages[i].Key())
		}
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// LoadTTFTBreakdownJSON reads a ttft_breakdown.json file.
func LoadTTFTBreakdownJSON(path string) (*TTFTBreakdown, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b TTFTBreakdown
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if b.TTFTMeanMs <= 0 || !finite(b.TTFTMeanMs) {
		return nil, fmt.Errorf("%s: field \"ttft_mean_ms\": want a positive number, got %v", path, b.TTFTMeanMs)
	}
	return &b, nil
}

// WriteText prints the breakdown as a table with its additivity verdict.
func (b *TTFTBreakdown) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "TTFT breakdown (%s, %s; means over the run window, %g requests)\n", b.Server, b.TTFTFamily, b.TTFTCount)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tphase\tmean ms\tshare\t")
	for _, st := range b.Stages {
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.1f%%\t\n", st.Stage, orDash(st.Phase), st.MeanMs, 100*st.Share)
	}
	fmt.Fprintf(tw, "stages\t\t%.3f\t%.1f%%\t\n", b.StageSumMs, 100*b.StageSumMs/b.TTFTMeanMs)
	fmt.Fprintf(tw, "TTFT\t\t%.3f\t100.0%%\t\n", b.TTFTMeanMs)
	if err := tw.Flush(); err != nil {
		return err
	}
	if b.Additive {
		_, err := fmt.Fprintf(w, "additive: stage means add up to the TTFT mean within %g%%\n", 100*AdditivityTolerance)
		return err
	}
	_, err := fmt.Fprintf(w, "warning: not additive: %s\n", b.Reason)
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
