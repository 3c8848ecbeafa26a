package compare

import (
	"fmt"

	"github.com/simbench/simbench/results"
)

// Scan streams the input's per-request records once into a Digest. When the
// input has no aggregate profile (a per-request file alone), the same pass
// computes it with results.Aggregator, exactly as results.SummarizeJSONL
// would. opts.FloorMs is the stall floor: only chunk gaps above it are kept
// with their times. Scan returns a nil Digest when the input has no records.
func Scan(in *Input, opts StallOptions) (*Digest, error) {
	if !in.HasRecords() {
		if in.Profile == nil {
			return nil, fmt.Errorf("%s: no aggregate profile and no per-request records", in.Path)
		}
		return nil, checkCounts(in, nil, false)
	}
	d := newDigest(in.Name, opts)
	var agg *results.Aggregator
	if in.Profile == nil {
		agg = results.NewAggregator(nil)
		d.poolGaps = false // the aggregator pools them; see below
	}
	n := 0
	err := in.eachRecord(func(m *results.RecordMetrics) {
		if agg != nil {
			agg.Add(m)
		}
		d.add(m)
		n++
	})
	if err != nil {
		return nil, err
	}
	if agg != nil && n == 0 {
		return nil, fmt.Errorf("%s: %w: nothing to compare", in.RecordsPath, results.ErrNoRecords)
	}
	if agg != nil {
		in.Profile = agg.Profile()
		d.TokenGaps = agg.PooledTokenGaps() // the same values, held once
	}
	d.finish()
	return d, checkCounts(in, d, agg == nil)
}

// checkCounts refuses a run with nothing to compare (no successful
// request: `{}`, or only failures), and warns when an AIPerf run's stored
// aggregate (not computed from the records in this pass) counts other
// requests than its records: the directory may mix two runs, or its
// records are an excerpt.
func checkCounts(in *Input, d *Digest, stored bool) error {
	valid, counted := in.Profile.Value(results.TagRequestCount, "avg")
	if err := checkSomething(in, d, valid, counted); err != nil {
		return err
	}
	if d == nil || !stored || in.Format != FormatAIPerf {
		return nil
	}
	failed, _ := in.Profile.Value(results.TagErrorRequestCount, "avg")
	if int(valid) != len(d.Requests) || int(failed) != d.Errors {
		in.Warnings = append(in.Warnings, warnf("%s: the aggregate counts request_count %d and error_request_count %d, "+
			"its per-request records %d and %d: not one run's (an excerpt, or files of two runs); the rows are the aggregate's, "+
			"the per-request figures the records'", in.Name, int(valid), int(failed), len(d.Requests), d.Errors))
	}
	return nil
}

// checkSomething refuses an input with nothing to compare: no successful
// request (a count of 0, or failures only), or neither a count nor a
// latency. A file that publishes latencies without a count (a vllm
// benchmark whose totals were cut) is compared on them.
func checkSomething(in *Input, d *Digest, valid float64, counted bool) error {
	if d != nil && len(d.Requests) > 0 {
		return nil
	}
	failed, _ := in.Profile.Value(results.TagErrorRequestCount, "avg")
	switch {
	case counted && valid <= 0, !counted && (failed > 0 || d != nil && d.Errors > 0):
		return fmt.Errorf("%s: no successful request: nothing to compare", in.Path)
	case !counted && !hasLatencies(in.Profile):
		return fmt.Errorf("%s: neither a request count nor a latency: nothing to compare", in.Path)
	}
	return nil
}

// hasLatencies reports whether p has any latency statistic to compare.
func hasLatencies(p *results.Profile) bool {
	for _, tag := range []string{results.TagRequestLatency, results.TagTTFT, results.TagITL, results.TagICL} {
		if _, ok := p.Value(tag, "avg"); ok {
			return true
		}
	}
	return false
}
