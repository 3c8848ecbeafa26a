package compare

import (
	"slices"

	"github.com/simbench/simbench/results"
)

// addTokens bins the request's output tokens at their arrival times.
//
// Token times come from the chunk times. A token_gap list says which chunk
// every token came with: a gap that is not zero starts the next chunk whose
// chunk gap is not zero, and a zero gap is a token of the current chunk (or
// of a chunk that arrived at the same instant). Without a token_gap list
// (every chunk carried one token, or an AIPerf file that does not say) the
// request's OSL is spread evenly over its chunks; with no chunk times at all
// but the first (a DynoSim record) the remaining tokens are spread evenly up
// to the request's end, as AIPerf's "dispersed throughput" does.
func (d *Digest) addTokens(m *results.RecordMetrics, ct []int64, osl float64, end int64) {
	switch {
	case osl <= 0:
		return
	case len(ct) == 0:
		d.bin(end).tokens += osl
	case len(ct) == 1 && osl > 1:
		d.bin(ct[0]).tokens++
		d.spread(osl-1, ct[0], end)
	case m.TokenGap != nil && len(m.ICL) == len(ct)-1:
		d.walkTokens(m.TokenGap, m.ICL, ct)
	default:
		per := osl / float64(len(ct))
		for _, t := range ct {
			d.bin(t).tokens += per
		}
	}
}

func (d *Digest) walkTokens(tokenGap, icl []float64, ct []int64) {
	c := 0
	d.bin(ct[0]).tokens++
	for _, g := range tokenGap {
		if g != 0 {
			j := c
			for j < len(icl) && icl[j] == 0 {
				j++
			}
			c = min(j+1, len(ct)-1)
		}
		d.bin(ct[c]).tokens++
	}
}

// spread adds n tokens uniformly over (a, b].
func (d *Digest) spread(n float64, a, b int64) {
	if b <= a {
		d.bin(b).tokens += n
		return
	}
	span := float64(b - a)
	for t := a; t < b; {
		next := min((floorDiv(t, fineBinNs)+1)*fineBinNs, b)
		d.bin(next - 1).tokens += n * float64(next-t) / span
		t = next
	}
}

// Second is one 1 s bin of a run's time series, from the run's start.
type Second struct {
	StartS     float64 // seconds from the run's start
	SpanS      float64 // 1, except for the last bin, which stops at the run's end
	Tokens     float64 // output tokens that arrived in this bin
	TokensPerS float64 // Tokens / SpanS (a last bin shorter than 0.1 s counts as 0.1 s)
	GapMaxMs   float64 // largest chunk gap that ended in this second
	GapMeanMs  float64 // mean chunk gap that ended in this second; 0 when none
	Gaps       int     // chunk gaps that ended in this second
}

// Seconds regroups the 100 ms bins into 1 s bins from the run's start
// (OriginNs) to its end.
func (d *Digest) Seconds() []Second {
	if len(d.Requests) == 0 {
		return nil
	}
	n := int(floorDiv(d.EndNs-d.OriginNs, 1e9)) + 1
	out := make([]Second, n)
	for i := range out {
		out[i].StartS = float64(i)
	}
	keys := make([]int64, 0, len(d.bins))
	for k := range d.bins {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a fixed order keeps the float sums reproducible
	for _, k := range keys {
		b := d.bins[k]
		s := int(floorDiv(k*fineBinNs-d.OriginNs, 1e9))
		s = min(max(s, 0), n-1)
		o := &out[s]
		o.Tokens += b.tokens
		o.GapMaxMs = max(o.GapMaxMs, b.gapMax)
		o.GapMeanMs += b.gapSum // a sum until the division below
		o.Gaps += b.gaps
	}
	dur := float64(d.EndNs-d.OriginNs) / 1e9
	for i := range out {
		o := &out[i]
		if o.Gaps > 0 {
			o.GapMeanMs /= float64(o.Gaps)
		}
		o.SpanS = min(1, dur-o.StartS)
		o.TokensPerS = o.Tokens / max(o.SpanS, 0.1)
	}
	return out
}
