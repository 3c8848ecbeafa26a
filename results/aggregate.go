package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// SLO is one goodput objective: a per-request metric and its threshold in
// display units. Metrics where larger is better pass when value ≥ threshold,
// all others when value ≤ threshold; a missing value fails (AIPerf's rule).
type SLO struct {
	Tag       string
	Threshold float64
}

// ParseGoodput parses AIPerf's --goodput syntax, e.g.
// "time_to_first_token:200 inter_token_latency:10" (space or comma separated).
func ParseGoodput(s string) ([]SLO, error) {
	var out []SLO
	seen := map[string]bool{}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
	if len(fields) == 0 && strings.TrimSpace(s) != "" {
		return nil, fmt.Errorf("goodput %q: want metric:threshold pairs", s)
	}
	for _, f := range fields {
		tag, val, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("goodput %q: want metric:threshold", f)
		}
		if _, known := recordIndex[tag]; !known {
			return nil, fmt.Errorf("goodput %q: %q is not a per-request metric", f, tag)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("goodput %q: threshold %q is not a number", f, val)
		}
		if def, _ := Lookup(tag); v < 0 && !def.Signed {
			return nil, fmt.Errorf("goodput %q: threshold %g is negative, and %s never is", f, v, tag)
		}
		if seen[tag] {
			return nil, fmt.Errorf("goodput %q: %s given twice", s, tag)
		}
		seen[tag] = true
		out = append(out, SLO{Tag: tag, Threshold: v})
	}
	return out, nil
}

// GoodputConfig is the SLOs as AIPerf's input_config records them:
// input.goodput, {metric tag: threshold}.
func GoodputConfig(slos []SLO) map[string]float64 {
	m := make(map[string]float64, len(slos))
	for _, s := range slos {
		m[s.Tag] = s.Threshold
	}
	return m
}

// GoodputSLOs is the SLOs an input_config's input.goodput records (see
// GoodputConfig), in tag order; nil for none.
func GoodputSLOs(m map[string]float64) []SLO {
	var out []SLO
	for _, tag := range slices.Sorted(maps.Keys(m)) {
		out = append(out, SLO{Tag: tag, Threshold: m[tag]})
	}
	return out
}

// ErrorCount is one row of AIPerf's error_summary.
type ErrorCount struct {
	Details ErrorDetails `json:"error_details"`
	Count   int          `json:"count"`
}

// Aggregator accumulates RecordMetrics and produces a run's Profile. Warmup
// records are ignored; failed records feed only error_request_count,
// error_isl and error_summary, exactly as in AIPerf.
type Aggregator struct {
	slos     []SLO
	scalars  [numRecordMetrics][]float64
	icl      []float64
	tokenGap []float64 // kept apart only once some request's gaps differ from its ICL
	split    bool
	other    map[string]*otherAcc
	errISL   []float64
	errors   map[ErrorDetails]int // by code, type and errorShape(message)
	errKeys  []ErrorDetails
	// errExample is the first message of each error_summary row.
	errExample map[ErrorDetails]string
	sessions   sessionAcc

	valid, failed, good      int
	minStart, maxEnd         int64
	totalISL, totalOSL       float64
	totalOut, totalReasoning float64
	haveReasoning            bool
}

type otherAcc struct {
	unit   string
	values []float64
	order  int
}

// NewAggregator returns an empty aggregator; slos enable goodput.
func NewAggregator(slos []SLO) *Aggregator {
	return &Aggregator{slos: slos, other: map[string]*otherAcc{},
		errors: map[ErrorDetails]int{}, errExample: map[ErrorDetails]string{}, minStart: math.MaxInt64, maxEnd: math.MinInt64}
}

// Add accumulates one request.
func (a *Aggregator) Add(m *RecordMetrics) {
	if m.Meta.BenchmarkPhase == "warmup" {
		return
	}
	a.sessions.add(m)
	if m.Error != nil {
		a.addError(m)
		return
	}
	a.valid++
	for id := range numRecordMetrics {
		if v, ok := m.get(id); ok {
			a.scalars[id] = append(a.scalars[id], v)
		}
	}
	a.addGaps(m)
	a.addOther(m.Other)
	a.addTotals(m)
	if a.slos != nil && a.meets(m) {
		a.good++
	}
}

// addGaps pools inter_chunk_latency and token_gap without storing the same
// list twice while they are equal.
func (a *Aggregator) addGaps(m *RecordMetrics) {
	if m.TokenGap != nil && !a.split {
		a.tokenGap = append([]float64(nil), a.icl...)
		a.split = true
	}
	a.icl = append(a.icl, m.ICL...)
	if a.split {
		a.tokenGap = append(a.tokenGap, m.TokenGaps()...)
	}
}

func (a *Aggregator) addError(m *RecordMetrics) {
	a.failed++
	if m.ErrorISL > 0 {
		a.errISL = append(a.errISL, float64(m.ErrorISL))
	}
	key := ErrorDetails{Code: m.Error.Code, Type: m.Error.Type, Message: errorShape(m.Error.Message)}
	if _, seen := a.errors[key]; !seen {
		a.errKeys = append(a.errKeys, key)
		a.errExample[key] = m.Error.Message
	}
	a.errors[key]++
}

// errorShape is an error message with every number masked: the grouping
// key of error_summary. AIPerf groups by code, type and message; its
// messages carry no per-request figures, ours (and servers') do ("timed out
// after 0.502 seconds", "cancelled after 1.3 seconds"), so one failure would
// split into a row per value. Messages that differ in words stay apart.
func errorShape(msg string) string {
	if strings.IndexFunc(msg, isDigit) < 0 {
		return msg
	}
	var b strings.Builder
	b.Grow(len(msg))
	for i := 0; i < len(msg); i++ {
		if !isDigit(rune(msg[i])) {
			b.WriteByte(msg[i])
			continue
		}
		b.WriteByte('#')
		for i+1 < len(msg) && (isDigit(rune(msg[i+1])) || msg[i+1] == '.' && i+2 < len(msg) && isDigit(rune(msg[i+2]))) {
			i++
		}
	}
	return b.String()
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func (a *Aggregator) addOther(others []NamedValue) {
	for _, o := range others {
		acc := a.other[o.Tag]
		if acc == nil {
			acc = &otherAcc{unit: o.Unit, order: len(a.other)}
			a.other[o.Tag] = acc
		}
		if o.IsList {
			acc.values = append(acc.values, o.List...)
		} else {
			acc.values = append(acc.values, o.Value)
		}
	}
}

func (a *Aggregator) addTotals(m *RecordMetrics) {
	isl, _ := m.get(idISL)
	osl, _ := m.get(idOSL)
	out, _ := m.get(idOutputTokenCount)
	reasoning, hasR := m.get(idReasoningTokens)
	a.totalISL += isl
	a.totalOSL += osl
	a.totalOut += out
	a.totalReasoning += reasoning
	a.haveReasoning = a.haveReasoning || hasR
	start := m.Meta.RequestStartNs
	a.minStart = min(a.minStart, start)
	if lat, ok := m.get(idRequestLatency); ok {
		a.maxEnd = max(a.maxEnd, start+int64(math.Round(lat*nsPerMs)))
	}
}

func (a *Aggregator) meets(m *RecordMetrics) bool {
	for _, slo := range a.slos {
		v, ok := m.Get(slo.Tag)
		if !ok {
			return false
		}
		def, _ := Lookup(slo.Tag)
		if def.LargerIsBetter && v < slo.Threshold || !def.LargerIsBetter && v > slo.Threshold {
			return false
		}
	}
	return true
}

// Profile computes the run-level metrics. Metrics with no values are absent.
func (a *Aggregator) Profile() *Profile {
	p := &Profile{SchemaVersion: SchemaVersion}
	for id := range numRecordMetrics {
		p.addDistribution(recordTags[id], a.scalars[id])
	}
	p.addDistribution(TagICL, a.icl)
	if a.split {
		p.addDistribution(TagTokenGap, a.tokenGap)
	} else if icl, ok := p.Metric(TagICL); ok {
		d, _ := Lookup(TagTokenGap) // the same values: summarize them once
		p.Metrics = append(p.Metrics, MetricResult{Tag: TagTokenGap, Unit: d.Unit, Stats: maps.Clone(icl.Stats)})
	}
	p.addDistribution(TagErrorISL, a.errISL)
	a.sessions.addTo(p)
	a.addOtherTo(p)
	a.addScalars(p)
	p.ErrorSummary = a.errorSummary()
	p.sortMetrics()
	return p
}

func (a *Aggregator) addOtherTo(p *Profile) {
	tags := make([]string, 0, len(a.other))
	for tag := range a.other {
		tags = append(tags, tag)
	}
	slices.SortFunc(tags, func(x, y string) int { return cmp.Compare(a.other[x].order, a.other[y].order) })
	for _, tag := range tags {
		acc := a.other[tag]
		if s, ok := Summarize(acc.values); ok {
			p.Metrics = append(p.Metrics, MetricResult{Tag: tag, Unit: acc.unit, Stats: s.Stats()})
		}
	}
}

func (a *Aggregator) addScalars(p *Profile) {
	if a.valid > 0 {
		p.addScalar(TagRequestCount, float64(a.valid))
		p.addScalar(TagTotalISL, a.totalISL)
		p.addScalar(TagTotalOSL, a.totalOSL)
		p.addScalar(TagTotalOutputTokens, a.totalOut)
		if a.haveReasoning {
			p.addScalar(TagTotalReasoning, a.totalReasoning)
		}
	}
	if a.failed > 0 {
		p.addScalar(TagErrorRequestCount, float64(a.failed))
		if len(a.errISL) > 0 {
			p.addScalar(TagTotalErrorISL, sum(append([]float64(nil), a.errISL...)))
		}
	}
	if a.valid == 0 || a.maxEnd <= a.minStart {
		return
	}
	durS := float64(a.maxEnd-a.minStart) / 1e9
	p.addScalar(TagBenchmarkDuration, durS)
	p.addScalar(TagRequestThroughput, float64(a.valid)/durS)
	p.addScalar(TagOutputThroughput, a.totalOSL/durS)
	p.addScalar(TagTotalThroughput, (a.totalISL+a.totalOSL)/durS)
	if a.slos != nil {
		p.addScalar(TagGoodRequestCount, float64(a.good))
		p.addScalar(TagGoodput, float64(a.good)/durS)
		p.addScalar(TagAttainment, attainment(float64(a.good), float64(a.valid), float64(a.failed)))
	}
	p.MinRequestNs, p.MaxResponseNs = a.minStart, a.maxEnd
}

func (a *Aggregator) errorSummary() []ErrorCount {
	out := make([]ErrorCount, 0, len(a.errKeys))
	for _, k := range a.errKeys {
		d := k
		d.Message = a.errExample[k]
		out = append(out, ErrorCount{Details: d, Count: a.errors[k]})
	}
	slices.SortStableFunc(out, func(a, b ErrorCount) int { return cmp.Compare(b.Count, a.Count) })
	return out
}
