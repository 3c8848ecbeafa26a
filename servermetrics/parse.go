package servermetrics

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// ParseExposition decodes a Prometheus exposition (text 0.0.4, OpenMetrics
// or delimited protobuf, as format says; expfmt.ResponseFormat reads it from
// a response's Content-Type) with prometheus/common's expfmt and returns its
// families sorted by name. Summaries are dropped: they cover the server's
// lifetime, not the run.
func ParseExposition(r io.Reader, format expfmt.Format) ([]Family, error) {
	dec := expfmt.NewDecoder(r, format)
	var mfs []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("metrics exposition: %w", err)
		}
		mfs = append(mfs, mf)
	}
	return FamiliesFromDTO(mfs), nil
}

// FamiliesFromDTO converts client_model metric families (what expfmt
// decodes and what a client_golang registry gathers) into Families, sorted
// by name. Summaries and native-only histograms are dropped.
func FamiliesFromDTO(mfs []*dto.MetricFamily) []Family {
	out := make([]Family, 0, len(mfs))
	for _, mf := range mfs {
		kind, ok := kindOf(mf.GetType())
		if !ok {
			continue
		}
		f := Family{Name: familyName(mf.GetName(), kind), Help: mf.GetHelp(), Kind: kind}
		for _, m := range mf.GetMetric() {
			if s, ok := seriesFromDTO(kind, m); ok {
				f.Series = append(f.Series, s)
			}
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// familyName names a counter family without its _total suffix, as AIPerf
// (Python's prometheus_client parser) keys counters in its export:
// vllm:prompt_tokens_total is exported as vllm:prompt_tokens.
func familyName(name string, kind Kind) string {
	if kind == KindCounter {
		return strings.TrimSuffix(name, "_total")
	}
	return name
}

func kindOf(t dto.MetricType) (Kind, bool) {
	switch t {
	case dto.MetricType_COUNTER:
		return KindCounter, true
	case dto.MetricType_GAUGE:
		return KindGauge, true
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return KindHistogram, true
	case dto.MetricType_UNTYPED:
		return KindUnknown, true
	}
	return "", false
}

func seriesFromDTO(kind Kind, m *dto.Metric) (Series, bool) {
	s := Series{}
	if len(m.GetLabel()) > 0 {
		s.Labels = make(map[string]string, len(m.GetLabel()))
		for _, lp := range m.GetLabel() {
			s.Labels[lp.GetName()] = lp.GetValue()
		}
	}
	switch kind {
	case KindCounter:
		s.Value = m.GetCounter().GetValue()
	case KindGauge:
		s.Value = m.GetGauge().GetValue()
	case KindUnknown:
		s.Value = m.GetUntyped().GetValue()
	case KindHistogram:
		h := m.GetHistogram()
		if h == nil || len(h.GetBucket()) == 0 {
			return s, false
		}
		s.Count, s.Sum = float64(h.GetSampleCount()), h.GetSampleSum()
		if h.SampleCountFloat != nil {
			s.Count = h.GetSampleCountFloat()
		}
		for _, b := range h.GetBucket() {
			c := float64(b.GetCumulativeCount())
			if b.CumulativeCountFloat != nil {
				c = b.GetCumulativeCountFloat()
			}
			s.Buckets = append(s.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: c})
		}
		slices.SortFunc(s.Buckets, func(a, b Bucket) int { return cmp.Compare(a.UpperBound, b.UpperBound) })
		if last := s.Buckets[len(s.Buckets)-1]; !math.IsInf(last.UpperBound, 1) {
			s.Buckets = append(s.Buckets, Bucket{UpperBound: math.Inf(1), Count: s.Count})
		}
	}
	return s, true
}
