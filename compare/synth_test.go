package compare

import "github.com/simbench/simbench/results"

// synthRecord builds request i of a synthetic run: requests start every
// 10 ms, TTFT 30 ms + jitter, chunks of one token every ~10 ms.
func synthRecord(i, chunks int) *results.Record {
	start := int64(1_700_000_000_000_000_000) + int64(i)*10_000_000
	r := &results.Record{ID: "r", SessionNum: i, TraceRow: i, StartNs: start, AckNs: start + 1_000_000,
		InputTokens: 100 + i%50, OutputTokens: chunks, Worker: "w" + string(rune('0'+i%4))}
	t := start + 30_000_000 + int64(i%7)*1_000_000
	for c := 0; c < chunks; c++ {
		r.Chunks = append(r.Chunks, results.Chunk{AtNs: t, Tokens: 1})
		t += 10_000_000 + int64((i+c)%5)*100_000
	}
	r.EndNs = t
	return r
}
