package results

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mergeRec is request row of a shard: sent at its intended time, 3 chunks.
func mergeRec(row int, intendedMs int64, ttftMs, gapMs int64) *Record {
	ms := int64(1e6)
	start := 1_700_000_000_000*ms + intendedMs*ms
	r := &Record{ID: "id-" + string(rune('a'+row)), TraceRow: row, IntendedNs: start, StartNs: start + int64(row)*1000,
		InputTokens: 10 + row, OutputTokens: 3, RequestedOutputTokens: 3}
	for k := range int64(3) {
		r.Chunks = append(r.Chunks, Chunk{AtNs: r.StartNs + (ttftMs+k*gapMs)*ms, Tokens: 1})
	}
	r.EndNs = r.Chunks[2].AtNs
	return r
}

func TestWriteRecordsRunEqualsOneComputation(t *testing.T) {
	shards := [][]*Record{
		{mergeRec(0, 0, 30, 5), mergeRec(3, 90, 31, 7)},
		{mergeRec(1, 30, 50, 4), mergeRec(4, 120, 20, 9)},
		{mergeRec(2, 60, 45, 6)},
	}
	dir := t.TempDir()
	var recs []RecordMetrics
	one := NewAggregator(nil)
	for i, sh := range shards {
		rw, err := CreateRun(filepath.Join(dir, "s", string(rune('0'+i))), RunOptions{})
		require.NoError(t, err)
		for _, r := range sh {
			m, err := rw.Add(r)
			require.NoError(t, err)
			one.Add(&m)
		}
		_, err = rw.Close(RunMeta{})
		require.NoError(t, err)
		got, err := LoadJSONL(filepath.Join(rw.Dir(), RecordsName))
		require.NoError(t, err)
		recs = append(recs, got...)
	}
	SortAsSent(recs)
	for i, m := range recs {
		assert.Equal(t, i, m.Meta.SessionNum)
		assert.Equal(t, i, m.Ext.TraceRow, "ordered by intended send time")
	}
	out := filepath.Join(dir, "merged")
	p, err := WriteRecordsRun(out, recs, RunMeta{StartNs: 1, EndNs: 2}, nil)
	require.NoError(t, err)
	fromFile, err := SummarizeJSONL(filepath.Join(out, RecordsName), nil)
	require.NoError(t, err)
	assert.Equal(t, fromFile.Metrics, p.Metrics)
	assert.Equal(t, one.Profile().Metrics, p.Metrics, "a single computation over the union")
	dur, ok := p.Value(TagBenchmarkDuration, "avg")
	require.True(t, ok)
	assert.InDelta(t, 0.120+0.000004+0.020+0.018, dur, 1e-9, "first start to last end, across shards")
	onDisk, err := LoadProfileJSON(filepath.Join(out, ProfileJSONName))
	require.NoError(t, err)
	assert.Equal(t, p.StartTime, onDisk.StartTime)
}
