package serve

import (
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// truth is the server's own record of a finished request, on the wall
// clock (ns since the Unix epoch, as a client's records are): its arrival
// (StartNs; IntendedNs is the same, AckNs when it reached the engine after
// the modelled frontend), when each token went out (Chunks: when its
// write to the connection began if the whole answer was streamed, else
// when the simulator had it due) and the last (EndNs). id and corr are the
// client's X-Request-ID and X-Correlation-ID (the response id without
// them), so a client's records join these. The simulator's detail (Sim: stage durations in virtual
// time) is left out; Worker is kept.
func (s *Server) truth(rec *results.Record, sent []int64, id, corr string) *results.Record {
	t := *rec
	t.ID, t.CorrelationID, t.Sim = id, corr, nil
	t.IntendedNs, t.StartNs, t.AckNs, t.EndNs = s.wallNs(rec.IntendedNs), s.wallNs(rec.StartNs), s.wallNs(rec.AckNs), s.wallNs(rec.EndNs)
	t.Chunks = make([]results.Chunk, len(rec.Chunks))
	whole := len(sent) == len(rec.Chunks)
	for i, c := range rec.Chunks {
		at := s.wallNs(c.AtNs)
		if whole {
			at = sent[i]
		}
		t.Chunks[i] = results.Chunk{AtNs: at, Tokens: c.Tokens}
	}
	if n := len(t.Chunks); whole && n > 0 {
		t.EndNs = t.Chunks[n-1].AtNs
	}
	return &t
}

// wallNs is the wall time of a simulator timestamp (sim.Epoch + virtual
// ns), in ns since the Unix epoch.
func (s *Server) wallNs(simNs int64) int64 { return s.eng.wall(simNs - sim.Epoch).UnixNano() }
