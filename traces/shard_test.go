package traces

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ShardSpec
		err  bool
	}{
		{"0/3", ShardSpec{0, 3}, false},
		{" 2 / 3 ", ShardSpec{2, 3}, false},
		{"0/1", ShardSpec{0, 1}, false},
		{"3/3", ShardSpec{}, true},
		{"-1/3", ShardSpec{}, true},
		{"1/0", ShardSpec{}, true},
		{"1", ShardSpec{}, true},
		{"a/b", ShardSpec{}, true},
	} {
		got, err := ParseShard(tc.in)
		if tc.err {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.want.String(), got.String())
	}
}

func TestShardPartitionsWholeSessions(t *testing.T) {
	wl := &Workload{BlockSize: 512, Source: "t", Requests: []Request{
		{Row: 0, TimestampMs: 0, HasTimestamp: true, SessionID: "a", InputLength: 1},
		{Row: 1, TimestampMs: 5, HasTimestamp: true, InputLength: 2},
		{Row: 2, TimestampMs: 6, HasTimestamp: true, SessionID: "b", InputLength: 3},
		{Row: 3, DelayMs: 1, SessionID: "a", Turn: 1, InputLength: 4},
		{Row: 4, TimestampMs: 9, HasTimestamp: true, InputLength: 5},
		{Row: 5, DelayMs: 2, SessionID: "b", Turn: 1, InputLength: 6},
		{Row: 6, TimestampMs: 12, HasTimestamp: true, SessionID: "c", InputLength: 7},
	}}
	wl.Digest = ComputeDigest(wl.Requests)
	const n = 3
	var rows []int
	sessionShard := map[string]int{}
	for i := range n {
		sh, err := Shard(wl, ShardSpec{i, n})
		require.NoError(t, err)
		again, err := Shard(wl, ShardSpec{i, n})
		require.NoError(t, err)
		assert.Equal(t, sh, again, "deterministic")
		assert.Equal(t, ComputeDigest(sh.Requests), sh.Digest)
		prev := -1
		for _, r := range sh.Requests {
			assert.Equal(t, wl.Requests[r.Row], r, "request unchanged")
			assert.Greater(t, r.Row, prev, "workload order kept")
			prev = r.Row
			rows = append(rows, r.Row)
			if r.SessionID != "" {
				if k, ok := sessionShard[r.SessionID]; ok {
					assert.Equal(t, k, i, "session %s split", r.SessionID)
				}
				sessionShard[r.SessionID] = i
			}
		}
	}
	sort.Ints(rows)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6}, rows, "union is the workload, each request once")
	// sessions by first appearance: a=0, row1=1, b=2, row4=3, c=4
	sh1, _ := Shard(wl, ShardSpec{1, n})
	assert.Equal(t, []int{1, 6}, rowsOf(sh1))
}

func rowsOf(wl *Workload) []int {
	var out []int
	for _, r := range wl.Requests {
		out = append(out, r.Row)
	}
	return out
}

func TestShardDividesConcurrency(t *testing.T) {
	wl := &Workload{Concurrency: 5, Requests: []Request{{Row: 0}, {Row: 1}, {Row: 2}}}
	total := 0
	for i := range 3 {
		sh, err := Shard(wl, ShardSpec{i, 3})
		require.NoError(t, err)
		total += sh.Concurrency
		assert.Equal(t, []int{i}, rowsOf(sh))
	}
	assert.Equal(t, 5, total)
	_, err := Shard(&Workload{Concurrency: 2, Requests: wl.Requests}, ShardSpec{0, 3})
	assert.ErrorContains(t, err, "cannot be divided")
	_, err = Shard(wl, ShardSpec{3, 3})
	assert.Error(t, err)
}
