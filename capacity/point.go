package capacity

import "github.com/simbench/simbench/results"

// PointOptions are a sweep's SLO settings, for NewPoint.
type PointOptions struct {
	Load Load
	// HasSLO: the runs were aggregated with --goodput SLOs.
	HasSLO bool
	// Target is the attainment target; MaxErrorRate is --max-error-rate
	// (< 0 off).
	Target, MaxErrorRate float64
}

// NewPoint is the summary point of one load's run: its profile's figures
// under AIPerf's tags and, with SLOs, its attainment and verdict.
func NewPoint(load float64, dir string, p *results.Profile, o PointOptions) Point {
	pt := Point{Dir: dir}
	if o.Load == Concurrency {
		pt.Concurrency = int(load)
	} else {
		pt.RequestRate = load
	}
	valid, _ := p.Value(results.TagRequestCount, "avg")
	failed, _ := p.Value(results.TagErrorRequestCount, "avg")
	pt.RequestCount, pt.ErrorRequestCount = int(valid), int(failed)
	if valid+failed > 0 {
		pt.ErrorRate = failed / (valid + failed)
	}
	pt.RequestThroughput, _ = p.Value(results.TagRequestThroughput, "avg")
	pt.OutputTokenThroughput, _ = p.Value(results.TagOutputThroughput, "avg")
	pt.TTFTP50, pt.TTFTP99 = stat(p, results.TagTTFT, "p50"), stat(p, results.TagTTFT, "p99")
	pt.ITLP50, pt.ITLP99 = stat(p, results.TagITL, "p50"), stat(p, results.TagITL, "p99")
	if !o.HasSLO {
		return pt
	}
	good, _ := p.Value(results.TagGoodRequestCount, "avg")
	g := int(good)
	pt.GoodRequestCount = &g
	pt.Goodput = stat(p, results.TagGoodput, "avg")
	if a, ok := p.Attainment(); ok {
		pt.Attainment = &a
	}
	meets := Meets(pt, o.Target, o.MaxErrorRate)
	pt.MeetsSLO = &meets
	return pt
}

func stat(p *results.Profile, tag, s string) *float64 {
	if v, ok := p.Value(tag, s); ok {
		return &v
	}
	return nil
}
