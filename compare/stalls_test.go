package compare

import (
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = int64(1_000_000)

// req builds a request that starts at startMs on worker, gets its first
// token after ttftMs and then one chunk of `tokens` tokens per gap.
func req(i int, worker string, startMs, ttftMs int64, gapsMs []int64, tokens int) *results.Record {
	start := int64(1_700_000_000)*1_000_000_000 + startMs*ms
	r := &results.Record{ID: "r", SessionNum: i, TraceRow: i, StartNs: start, Worker: worker, InputTokens: 10}
	at := start + ttftMs*ms
	r.Chunks = append(r.Chunks, results.Chunk{AtNs: at, Tokens: tokens})
	for _, g := range gapsMs {
		at += g * ms
		r.Chunks = append(r.Chunks, results.Chunk{AtNs: at, Tokens: tokens})
	}
	r.OutputTokens = tokens * len(r.Chunks)
	r.EndNs = at
	return r
}

func gaps(n int, ms int64) []int64 {
	g := make([]int64, n)
	for i := range g {
		g[i] = ms
	}
	return g
}

func digestOf(opts StallOptions, recs ...*results.Record) *Digest {
	d := newDigest("test", opts)
	for _, r := range recs {
		m := results.ComputeMetrics(r)
		d.add(&m)
	}
	d.finish()
	return d
}

func TestStallsKnownCount(t *testing.T) {
	t.Parallel()
	var recs []*results.Record
	for i := 0; i < 20; i++ {
		g := gaps(49, 10)
		switch {
		case i < 5:
			g[10+i] = 120 // five stalls
		case i < 8:
			g[5] = 40 // above 2 × median but below the 50 ms floor
		case i == 8:
			g[7] = 50 // exactly the threshold: not a stall
		}
		recs = append(recs, req(i, "w0", int64(i)*10_000, 30, g, 1))
	}
	s := digestOf(DefaultStallOptions, recs...).Stalls()
	require.NotNil(t, s)
	assert.Equal(t, 20*49, s.Gaps)
	assert.Equal(t, 10.0, s.MedianGapMs)
	assert.Equal(t, 50.0, s.ThresholdMs)
	assert.Equal(t, 5, s.Count)
	assert.InDelta(t, 5*(120-10)/1e3, s.BlockedS, 1e-12)
	assert.InDelta(t, 5.0/980*1000, s.Per1000Gaps, 1e-12)
	assert.Equal(t, 120.0, s.MaxMs)
	require.Len(t, s.Events, 5)
	// request 0's stall ends 30 + 10 × 10 + 120 ms after the run's start
	// (ChunkTimesNs adds ms floats at wall-clock magnitude, where a float64
	// step is 256 ns: the rounding adds up over the chunks)
	assert.InDelta(t, 0.25, s.Events[0].AtS, 1e-5)
	assert.Equal(t, 5, sum(s.ByDecile[:]))
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func TestStallsKOverFloor(t *testing.T) {
	t.Parallel()
	g := gaps(99, 20)
	g[3], g[50], g[70] = 90, 150, 101
	s := digestOf(DefaultStallOptions, req(0, "w0", 0, 30, g, 1)).Stalls()
	assert.Equal(t, 100.0, s.ThresholdMs, "5 × 20 ms median beats the floor")
	assert.Equal(t, 2, s.Count)

	s = digestOf(StallOptions{K: 3, FloorMs: 50}, req(0, "w0", 0, 30, g, 1)).Stalls()
	assert.Equal(t, 60.0, s.ThresholdMs)
	assert.Equal(t, 3, s.Count)
}

// With multi-token chunks the pooled token gaps are mostly zeros (tokens of
// one chunk arrive together): the median is 0, the floor decides, and the
// chunk gaps themselves are the candidates.
func TestStallsMultiTokenChunks(t *testing.T) {
	t.Parallel()
	g := gaps(30, 40)
	g[12] = 200
	d := digestOf(DefaultStallOptions, req(0, "w0", 0, 30, g, 4))
	s := d.Stalls()
	assert.Equal(t, 31*4-1, s.Gaps)
	assert.Equal(t, 0.0, s.MedianGapMs)
	assert.Equal(t, 1, s.Count)
	assert.InDelta(t, 0.2, s.BlockedS, 1e-12)
}

func TestStallsPrefillAttribution(t *testing.T) {
	t.Parallel()
	// Request 0 on w0 stalls from 30+10×10 = 130 ms to 330 ms.
	g := gaps(30, 10)
	g[10] = 200
	stalled := req(0, "w0", 0, 30, g, 1)
	sameWorker := req(1, "w0", 200, 100, gaps(5, 10), 1)  // prefill 200–300 ms on w0
	otherWorker := req(2, "w1", 150, 100, gaps(5, 10), 1) // prefill 150–250 ms on w1
	s := digestOf(DefaultStallOptions, stalled, sameWorker, otherWorker).Stalls()
	require.Equal(t, 1, s.Count)
	assert.Equal(t, "worker", s.Scope)
	assert.Equal(t, 1, s.PrefillOverlap)

	s = digestOf(DefaultStallOptions, stalled, otherWorker).Stalls()
	assert.Equal(t, 0, s.PrefillOverlap, "another worker's prefill does not count")

	noWorker := req(2, "", 150, 100, gaps(5, 10), 1)
	s = digestOf(DefaultStallOptions, stalled, noWorker).Stalls()
	assert.Equal(t, "run", s.Scope, "a request without a worker makes attribution run-wide")
	assert.Equal(t, 1, s.PrefillOverlap)

	later := req(1, "w0", 400, 100, gaps(5, 10), 1) // prefill 400–500 ms: after the stall
	s = digestOf(DefaultStallOptions, stalled, later).Stalls()
	assert.Equal(t, 0, s.PrefillOverlap)
}

// interferenceRun has one long-decoding request per stall, each stalling
// while a short request prefills on the same worker, or not.
func interferenceRun(overlap bool) []*results.Record {
	var recs []*results.Record
	for i := 0; i < 6; i++ {
		base := int64(i) * 5000 // requests far apart: prefill covers little time
		g := gaps(40, 10)
		g[10] = 200 // stall from base+130 to base+330 ms
		recs = append(recs, req(2*i, "w0", base, 30, g, 1))
		start := base + 200
		if !overlap {
			start = base + 1500
		}
		recs = append(recs, req(2*i+1, "w0", start, 80, gaps(3, 10), 1))
	}
	return recs
}

func TestInterferenceSuspected(t *testing.T) {
	t.Parallel()
	s := digestOf(DefaultStallOptions, interferenceRun(true)...).Stalls()
	require.Equal(t, 6, s.Count)
	assert.Equal(t, 6, s.PrefillOverlap)
	assert.Less(t, s.PrefillCoverage, 0.2)
	assert.True(t, s.InterferenceSuspected)

	s = digestOf(DefaultStallOptions, interferenceRun(false)...).Stalls()
	assert.Equal(t, 0, s.PrefillOverlap)
	assert.False(t, s.InterferenceSuspected)
}

func TestNoTokenGapsNoStalls(t *testing.T) {
	t.Parallel()
	var d *Digest
	assert.Nil(t, d.Stalls())
	r := req(0, "w0", 0, 30, nil, 1)
	r.NonStreaming = true
	assert.Nil(t, digestOf(DefaultStallOptions, r).Stalls())
}

func TestThroughputSeconds(t *testing.T) {
	t.Parallel()
	// 4-token chunks every 100 ms for 3 s; a 1-token-chunk request; a
	// non-streaming one.
	a := req(0, "w0", 0, 50, gaps(30, 100), 4)
	b := req(1, "w0", 500, 20, gaps(9, 100), 1)
	c := req(2, "w0", 100, 0, nil, 1)
	c.NonStreaming, c.OutputTokens = true, 7
	d := digestOf(DefaultStallOptions, a, b, c)
	secs := d.Seconds()
	total := 0.0
	for _, s := range secs {
		total += s.Tokens
	}
	assert.InDelta(t, float64(31*4+10+7), total, 1e-9)
	require.Len(t, secs, 4, "the run lasts 3.05 s")
	assert.InDelta(t, 0.05, secs[3].SpanS, 1e-9)
	assert.InDelta(t, secs[3].Tokens/0.1, secs[3].TokensPerS, 1e-9, "a last bin under 0.1 s counts as 0.1 s")
}
