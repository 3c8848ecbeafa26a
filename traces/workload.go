// Package traces loads, filters, synthesises and describes request workloads.
//
// A Workload is the list of requests that both the load generator and the
// simulator replay. It comes from a Mooncake-format JSONL trace (ReadMooncake,
// LoadMooncake), from a seeded generator (Synthesize), or from another
// workload through pure filters (Apply). WriteJSONL writes any workload back
// as Mooncake JSONL, which ReadMooncake reads back unchanged.
//
// Replay semantics:
//   - A request with HasTimestamp is open-loop: it is sent at TimestampMs
//     (ms from schedule start), or later if a Concurrency cap blocks it.
//   - A request without a timestamp is closed-loop: it is sent as soon as one
//     of Concurrency slots frees (Concurrency must then be > 0).
//   - A later turn of a session (same SessionID, Turn > 0) is sent once the
//     turns it waits for have all completed, plus DelayMs (the tool or think
//     time); its own timestamp, if any, is the earliest send time. It waits
//     for the turns Parents lists (a session is then a DAG of turns: a turn
//     with several children fans out into concurrent sub-agent branches, one
//     with several parents joins them), or for the previous turn when Parents
//     is empty. DelayMs on a session's first turn has no previous turn to
//     wait for and is ignored.
//   - Each request without a SessionID is a single-turn session of its own.
package traces

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
)

// MooncakeBlockSize is the number of tokens per hash_ids block in Mooncake
// traces (AIPerf's default block size for mooncake_trace).
const MooncakeBlockSize = 512

// Request is one request of a workload (one trace row, or one synthetic request).
type Request struct {
	Row          int     // 0-based index in the source (trace line order among data rows; synthetic: index)
	Line         int     // 1-based source line number (0 for synthetic)
	TimestampMs  float64 // intended send time, ms from schedule start (only meaningful when HasTimestamp)
	HasTimestamp bool
	DelayMs      float64 // multi-turn: wait this long after the turns it waits for complete (tool wait)
	Parents      []int   // DAG: the Turns of its session it waits for, ascending, each < Turn (empty: Turn−1)
	SessionID    string  // "" = single-turn request
	Turn         int     // 0-based turn index within its session
	InputLength  int     // ISL in tokens
	OutputLength int     // requested OSL in tokens (0 = not specified: the server's default)
	HashIDs      []int64 // prefix-block hashes at Workload.BlockSize tokens per block (may be nil)
	TextInput    string  // literal prompt when the trace gives one
	Warmup       bool    // excluded from metrics
}

// Workload is what both the load generator and the simulator replay.
type Workload struct {
	Requests    []Request // in send order; sessions' turns in turn order
	BlockSize   int       // tokens per hash_id block (512 for Mooncake)
	Concurrency int       // closed-loop: N in flight; with timestamps it is a cap (0 = unlimited)
	Source      string    // file path or "synthetic:..." description
	Digest      string    // sha256 hex of the canonical request list (stable; used to check two runs replay the same workload)
}

// ComputeDigest returns the sha256 hex digest of the canonical encoding of
// reqs. It covers everything that changes what is sent and when (timestamp,
// delay, session, turn, lengths, hash ids, text, warmup) and leaves out
// provenance (Row, Line). It does not cover Workload.BlockSize, Concurrency
// or Source: two workloads with the same digest send the same requests.
func ComputeDigest(reqs []Request) string {
	d := digester{h: sha256.New()}
	d.int(int64(len(reqs)))
	for i := range reqs {
		r := &reqs[i]
		d.bool(r.HasTimestamp)
		if r.HasTimestamp {
			d.float(r.TimestampMs)
		}
		d.float(r.DelayMs)
		d.string(r.SessionID)
		d.int(int64(r.Turn))
		d.int(int64(r.InputLength))
		d.int(int64(r.OutputLength))
		d.int(int64(len(r.HashIDs)))
		for _, id := range r.HashIDs {
			d.int(id)
		}
		d.string(r.TextInput)
		d.bool(r.Warmup)
		if len(r.Parents) > 0 { // absent from chain-only workloads, whose digests stay as they were
			d.int(-1)
			d.int(int64(len(r.Parents)))
			for _, p := range r.Parents {
				d.int(int64(p))
			}
		}
		d.flush(false)
	}
	d.flush(true)
	return hex.EncodeToString(d.h.Sum(nil))
}

// digester buffers the canonical encoding: little-endian int64s, float64
// bits, length-prefixed strings and one byte per bool.
type digester struct {
	h   hash.Hash
	buf []byte
}

func (d *digester) int(v int64)     { d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(v)) }
func (d *digester) float(v float64) { d.int(int64(math.Float64bits(v))) }

func (d *digester) string(s string) {
	d.int(int64(len(s)))
	d.buf = append(d.buf, s...)
}

func (d *digester) bool(b bool) {
	if b {
		d.buf = append(d.buf, 1)
		return
	}
	d.buf = append(d.buf, 0)
}

func (d *digester) flush(force bool) {
	if force || len(d.buf) >= 1<<16 {
		d.h.Write(d.buf)
		d.buf = d.buf[:0]
	}
}

// session is one group of requests replayed as a conversation: the indices
// (into Workload.Requests) of its turns, in order.
type session struct {
	id      string
	indices []int
}

// sessions groups requests into sessions in order of first appearance. Each
// request without a SessionID is a session of its own.
func sessions(reqs []Request) []session {
	var out []session
	byID := make(map[string]int)
	for i := range reqs {
		id := reqs[i].SessionID
		if id == "" {
			out = append(out, session{indices: []int{i}})
			continue
		}
		k, ok := byID[id]
		if !ok {
			k = len(out)
			byID[id] = k
			out = append(out, session{id: id})
		}
		out[k].indices = append(out[k].indices, i)
	}
	return out
}

// cloneRequest returns a deep copy of r (HashIDs is not shared).
func cloneRequest(r Request) Request {
	if r.HashIDs != nil {
		r.HashIDs = append([]int64(nil), r.HashIDs...)
	}
	if r.Parents != nil {
		r.Parents = append([]int(nil), r.Parents...)
	}
	return r
}

// ParentTurns returns the turns r waits for: Parents, or the previous turn
// for a later turn without Parents, or none for a first turn.
func ParentTurns(r *Request) []int {
	switch {
	case len(r.Parents) > 0:
		return r.Parents
	case r.Turn > 0:
		return []int{r.Turn - 1}
	}
	return nil
}

// checkParents says what is wrong with r's Parents ("" when nothing is):
// they need a session and a later turn, and list earlier turns in
// ascending order, so a session's turns are always a DAG in turn order.
func checkParents(r *Request) string {
	if len(r.Parents) == 0 {
		return ""
	}
	if r.SessionID == "" || r.Turn == 0 {
		return "a first turn (or a request without session_id) waits for no earlier turn"
	}
	prev := -1
	for _, p := range r.Parents {
		if p <= prev || p >= r.Turn {
			return fmt.Sprintf("want earlier turns of the session (0..%d) in ascending order, got %v", r.Turn-1, r.Parents)
		}
		prev = p
	}
	return ""
}

// CheckParents reports the first request whose Parents are invalid (see
// Request.Parents), naming its row and source line.
func CheckParents(reqs []Request) error {
	for i := range reqs {
		if msg := checkParents(&reqs[i]); msg != "" {
			return fmt.Errorf("request %d (line %d): field \"parents\": %s", reqs[i].Row, reqs[i].Line, msg)
		}
	}
	return nil
}

// blocksFor returns the number of hash blocks for inputLength tokens:
// ceil(inputLength / blockSize).
func blocksFor(inputLength, blockSize int) int {
	if inputLength <= 0 {
		return 0
	}
	return (inputLength + blockSize - 1) / blockSize
}

// hashIDsConsistent reports whether n hash blocks fit inputLength tokens:
// every block but the last is full and the last holds 1..blockSize tokens,
// i.e. 0 < L − (n−1)·blockSize ≤ blockSize. An empty list always fits.
func hashIDsConsistent(inputLength, n, blockSize int) bool {
	if n == 0 {
		return true
	}
	final := int64(inputLength) - int64(n-1)*int64(blockSize)
	return final > 0 && final <= int64(blockSize)
}
