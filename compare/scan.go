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
		return nil, nil
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
	return d, nil
}
