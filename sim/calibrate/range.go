package calibrate

import (
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// calibrationRange is the workload range the targets covered: ISL and OSL
// of their requests, their closed-loop concurrency, the sequences per step
// seen in the token gaps and the workloads' prefix reuse.
func calibrationRange(targets []Target, steps []Step) sim.CalibrationRange {
	r := sim.CalibrationRange{ISL: [2]int{-1, 0}, OSL: [2]int{-1, 0}, Concurrency: [2]int{-1, 0},
		Batch: [2]int{-1, 0}, PrefixHitRate: [2]float64{-1, 0}}
	for _, t := range targets {
		for i := range t.Workload.Requests {
			q := &t.Workload.Requests[i]
			if !q.Warmup {
				r.ISL = span(r.ISL, q.InputLength)
				r.OSL = span(r.OSL, q.OutputLength)
			}
		}
		r.Concurrency = span(r.Concurrency, t.Workload.Concurrency)
		hit := traces.Describe(t.Workload).PrefixReuseRatio
		if r.PrefixHitRate[0] < 0 || hit < r.PrefixHitRate[0] {
			r.PrefixHitRate[0] = hit
		}
		r.PrefixHitRate[1] = max(r.PrefixHitRate[1], hit)
	}
	for _, s := range steps {
		r.Batch = span(r.Batch, int(s.Shape.DecodeSeqs+s.Shape.PrefillSeqs))
	}
	for _, p := range []*[2]int{&r.ISL, &r.OSL, &r.Concurrency, &r.Batch} {
		p[0] = max(p[0], 0)
	}
	r.PrefixHitRate[0] = max(r.PrefixHitRate[0], 0)
	return r
}

func span(r [2]int, v int) [2]int {
	if r[0] < 0 || v < r[0] {
		r[0] = v
	}
	r[1] = max(r[1], v)
	return r
}
