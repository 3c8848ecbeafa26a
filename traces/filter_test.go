package traces

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timed builds single-turn requests at the given timestamps.
func timed(ts ...float64) *Workload {
	wl := &Workload{BlockSize: 512, Source: "t"}
	for i, t := range ts {
		wl.Requests = append(wl.Requests, Request{Row: i, Line: i + 1, TimestampMs: t, HasTimestamp: true, InputLength: 10, OutputLength: 5, HashIDs: []int64{int64(i)}})
	}
	wl.Digest = ComputeDigest(wl.Requests)
	return wl
}

func timestamps(wl *Workload) []float64 {
	var out []float64
	for _, r := range wl.Requests {
		out = append(out, r.TimestampMs)
	}
	return out
}

func rows(wl *Workload) []int {
	var out []int
	for _, r := range wl.Requests {
		out = append(out, r.Row)
	}
	return out
}

// conversation: session a (t=0, then two later turns), single request at
// 100, session b (t=200, then one later turn), single request at 300.
func conversation() *Workload {
	wl := &Workload{BlockSize: 512, Source: "conv", Requests: []Request{
		{Row: 0, SessionID: "a", Turn: 0, TimestampMs: 0, HasTimestamp: true, InputLength: 100, OutputLength: 10},
		{Row: 1, TimestampMs: 100, HasTimestamp: true, InputLength: 100, OutputLength: 10},
		{Row: 2, SessionID: "a", Turn: 1, DelayMs: 40, InputLength: 200, OutputLength: 10},
		{Row: 3, SessionID: "b", Turn: 0, TimestampMs: 200, HasTimestamp: true, InputLength: 100, OutputLength: 10},
		{Row: 4, SessionID: "a", Turn: 2, DelayMs: 60, InputLength: 300, OutputLength: 1000},
		{Row: 5, SessionID: "b", Turn: 1, TimestampMs: 500, HasTimestamp: true, DelayMs: 10, InputLength: 200, OutputLength: 10},
		{Row: 6, TimestampMs: 300, HasTimestamp: true, InputLength: 100, OutputLength: 10},
	}}
	wl.Digest = ComputeDigest(wl.Requests)
	return wl
}

func TestApplyTimeAndCount(t *testing.T) {
	tests := []struct {
		name     string
		wl       *Workload
		f        Filter
		wantRows []int
		wantTs   []float64
	}{
		{"zero filter keeps everything", timed(0, 10, 20), Filter{}, []int{0, 1, 2}, []float64{0, 10, 20}},
		{"window is inclusive, start becomes zero", timed(0, 100, 150, 200, 300), Filter{StartMs: 100, EndMs: 200},
			[]int{1, 2, 3}, []float64{0, 50, 100}},
		{"end only", timed(0, 100, 200), Filter{EndMs: 100}, []int{0, 1}, []float64{0, 100}},
		{"HasWindow with zero bounds keeps all", timed(5, 6), Filter{HasWindow: true}, []int{0, 1}, []float64{5, 6}},
		{"rebase", timed(1000, 1500, 2500), Filter{RebaseTime: true}, []int{0, 1, 2}, []float64{0, 500, 1500}},
		{"speedup", timed(0, 100, 300), Filter{Speedup: 2}, []int{0, 1, 2}, []float64{0, 50, 150}},
		{"slowdown", timed(0, 100), Filter{Speedup: 0.5}, []int{0, 1}, []float64{0, 200}},
		{"window then speedup", timed(0, 100, 300), Filter{StartMs: 100, Speedup: 4}, []int{1, 2}, []float64{0, 50}},
		{"limit", timed(0, 1, 2, 3), Filter{Limit: 2}, []int{0, 1}, []float64{0, 1}},
		{"window keeps sessions by first turn", conversation(), Filter{StartMs: 50, EndMs: 250},
			[]int{1, 3, 5}, []float64{50, 150, 450}},
		{"window drops sessions that start before it", conversation(), Filter{StartMs: 250},
			[]int{6}, []float64{50}},
		{"limit keeps whole sessions", conversation(), Filter{Limit: 4}, []int{0, 1, 2, 4}, []float64{0, 100, 0, 0}},
		{"limit stops at the first session that does not fit", conversation(), Filter{Limit: 2}, nil, nil},
		{"max total tokens drops whole session", conversation(), Filter{MaxTotalTokens: 500},
			[]int{1, 3, 5, 6}, []float64{100, 200, 500, 300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneWorkload(tt.wl)
			got, err := Apply(tt.wl, tt.f)
			assert.Equal(t, before, tt.wl, "input must not change")
			if tt.wantRows == nil {
				require.EqualError(t, err, "filter: no requests left")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantRows, rows(got))
			assert.Equal(t, tt.wantTs, timestamps(got))
			assert.Equal(t, ComputeDigest(got.Requests), got.Digest)
			assert.Equal(t, tt.wl.Source, got.Source)
		})
	}
}

func TestApplySpeedupDividesDelays(t *testing.T) {
	got, err := Apply(conversation(), Filter{Speedup: 2})
	require.NoError(t, err)
	assert.Equal(t, 20.0, got.Requests[2].DelayMs)
	assert.Equal(t, 250.0, got.Requests[5].TimestampMs)
}

func TestApplyWindowNeedsTimestamps(t *testing.T) {
	wl := &Workload{Requests: []Request{{Row: 0, Line: 4, InputLength: 1}}}
	_, err := Apply(wl, Filter{StartMs: 1})
	require.EqualError(t, err, "filter: a time window needs timestamps, but request 0 (line 4) has none")
}

func TestFilterValidate(t *testing.T) {
	tests := []struct {
		f    Filter
		want string
	}{
		{Filter{Limit: -1}, "--limit must be >= 0, got -1"},
		{Filter{MaxISL: -2}, "--max-isl must be >= 0, got -2"},
		{Filter{Speedup: -1}, "--speedup must be a finite number >= 0, got -1"},
		{Filter{ScaleLengths: nan()}, "--scale-lengths must be a finite number >= 0, got NaN"},
		{Filter{StartMs: 10, EndMs: 5}, "--end-offset-ms (5) must be >= --start-offset-ms (10)"},
		{Filter{StartMs: 10, RebaseTime: true}, "--auto-offset and --start-offset-ms are mutually exclusive (both set time zero)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.EqualError(t, tt.f.Validate(), tt.want)
			_, err := Apply(timed(0), tt.f)
			require.EqualError(t, err, "filter: "+tt.want)
		})
	}
}

func TestApplyLengths(t *testing.T) {
	// Request 0: 1300 tokens = 512 + 512 + 276 over ids 1, 2, 3.
	// Request 1: the same prompt again. Request 2: 700 = 512 + 188, ids 1, 9.
	base := func() *Workload {
		return &Workload{BlockSize: 512, Requests: []Request{
			{Row: 0, InputLength: 1300, OutputLength: 100, HashIDs: []int64{1, 2, 3}},
			{Row: 1, InputLength: 1300, OutputLength: 100, HashIDs: []int64{1, 2, 3}},
			{Row: 2, InputLength: 700, OutputLength: 300, HashIDs: []int64{1, 9}},
			{Row: 3, TextInput: "literal", InputLength: 5000, OutputLength: 300},
		}}
	}
	type shape struct {
		isl, osl int
		ids      []int64
	}
	tests := []struct {
		name string
		f    Filter
		want []shape
	}{
		{"cap ISL at a block boundary keeps ids", Filter{MaxISL: 1024}, []shape{
			{1024, 100, []int64{1, 2}}, {1024, 100, []int64{1, 2}}, {700, 300, []int64{1, 9}}, {5000, 300, nil}}},
		{"cap ISL mid-block cuts the last block to a fresh id, shared by equal cuts", Filter{MaxISL: 600}, []shape{
			{600, 100, []int64{1, 10}}, {600, 100, []int64{1, 10}}, {600, 300, []int64{1, 11}}, {5000, 300, nil}}},
		{"cap OSL", Filter{MaxOSL: 200}, []shape{
			{1300, 100, []int64{1, 2, 3}}, {1300, 100, []int64{1, 2, 3}}, {700, 200, []int64{1, 9}}, {5000, 200, nil}}},
		{"scale down", Filter{ScaleLengths: 0.5}, []shape{
			{650, 50, []int64{1, 10}}, {650, 50, []int64{1, 10}}, {350, 150, []int64{11}}, {5000, 150, nil}}},
		{"scale up grows partial blocks consistently and adds unique blocks", Filter{ScaleLengths: 2}, []shape{
			{2600, 200, []int64{1, 2, 10, 11, 12, 13}}, {2600, 200, []int64{1, 2, 10, 14, 15, 16}},
			{1400, 600, []int64{1, 17, 18}}, {5000, 600, nil}}},
		{"scale then cap", Filter{ScaleLengths: 2, MaxISL: 1024, MaxOSL: 250}, []shape{
			{1024, 200, []int64{1, 2}}, {1024, 200, []int64{1, 2}}, {1024, 250, []int64{1, 10}}, {5000, 250, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wl := base()
			before := cloneWorkload(wl)
			got, err := Apply(wl, tt.f)
			require.NoError(t, err)
			assert.Equal(t, before, wl)
			var shapes []shape
			for _, r := range got.Requests {
				shapes = append(shapes, shape{r.InputLength, r.OutputLength, r.HashIDs})
				assert.True(t, hashIDsConsistent(r.InputLength, len(r.HashIDs), 512), "row %d", r.Row)
			}
			assert.Equal(t, tt.want, shapes)
		})
	}
}

func TestApplyRealTraceKeepsHashIDsConsistent(t *testing.T) {
	wl, _, err := LoadMooncake(sliceTrace)
	require.NoError(t, err)
	for _, f := range []Filter{{ScaleLengths: 0.37}, {ScaleLengths: 1.9}, {MaxISL: 3000}, {MaxISL: 4096, ScaleLengths: 1.5}} {
		got, err := Apply(wl, f)
		require.NoError(t, err)
		seen := map[int64]int{} // id -> token count
		for _, r := range got.Requests {
			require.True(t, hashIDsConsistent(r.InputLength, len(r.HashIDs), 512))
			for i, id := range r.HashIDs {
				n := blockTokens(r.InputLength, len(r.HashIDs), i, 512)
				if prev, ok := seen[id]; ok && i < len(r.HashIDs)-1 {
					assert.Equal(t, prev, n, "id %d used at two sizes", id)
				}
				if i < len(r.HashIDs)-1 {
					seen[id] = n
				}
			}
		}
		assertRoundTrip(t, got)
	}
}

func cloneWorkload(wl *Workload) *Workload {
	c := *wl
	c.Requests = make([]Request, len(wl.Requests))
	for i := range wl.Requests {
		c.Requests[i] = cloneRequest(wl.Requests[i])
	}
	return &c
}
