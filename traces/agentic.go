package traces

import "fmt"

// TurnSpec is one turn of an agent session for BuildSession.
type TurnSpec struct {
	// Parents are the turns it waits for (Request.Parents); it continues the
	// context of the one with the longest (prompt plus output; ties: the
	// later turn). Empty: the previous turn.
	Parents      []int
	NewTokens    int     // tokens it adds to that context: the tool result and the next instruction
	OutputLength int     // tokens it asks for
	DelayMs      float64 // the tool wait after its last parent ends
}

// BuildSession returns the requests of one agent session: turn 0's prompt
// is NewTokens tokens; every later turn's prompt is the prompt of the turn
// whose context it continues, plus that turn's output, plus its NewTokens.
// Hash blocks are prefix-consistent, so prefix caches and the KV router see
// the reuse: a turn's hash_ids start with its context turn's (the last,
// partial block included: its tokens continue it), then blocks that stand
// for that turn's output (shared by all the turns continuing it: sibling
// branches share their parent's answer), then fresh blocks. next hands out
// fresh block ids and is advanced.
func BuildSession(id string, turns []TurnSpec, blockSize int, next *int64) ([]Request, error) {
	if blockSize < 1 {
		return nil, fmt.Errorf("session %q: block size must be > 0, got %d", id, blockSize)
	}
	reqs := make([]Request, len(turns))
	cont := make([][]int64, len(turns)) // per turn: the blocks standing for its output
	fresh := func() int64 { *next++; return *next - 1 }
	for t, ts := range turns {
		r := Request{Row: t, SessionID: id, Turn: t, OutputLength: ts.OutputLength, DelayMs: ts.DelayMs}
		if len(ts.Parents) > 0 {
			r.Parents = append([]int(nil), ts.Parents...)
		}
		if msg := checkParents(&r); msg != "" || ts.NewTokens < 0 || ts.OutputLength < 0 {
			return nil, fmt.Errorf("session %q turn %d: parents %v, new tokens %d, output %d: invalid %s",
				id, t, ts.Parents, ts.NewTokens, ts.OutputLength, msg)
		}
		var base []int64
		if ps := ParentTurns(&r); len(ps) > 0 {
			c := contextTurn(reqs, ps)
			p := &reqs[c]
			r.InputLength = p.InputLength + p.OutputLength
			full := r.InputLength / blockSize
			for len(p.HashIDs)+len(cont[c]) < full {
				cont[c] = append(cont[c], fresh())
			}
			base = append(append(base, p.HashIDs...), cont[c]...)
			base = base[:max(full, len(p.HashIDs))]
		}
		r.InputLength += ts.NewTokens
		r.HashIDs = base
		for len(r.HashIDs) < blocksFor(r.InputLength, blockSize) {
			r.HashIDs = append(r.HashIDs, fresh())
		}
		reqs[t] = r
	}
	return reqs, nil
}

// contextTurn is the parent whose context a turn continues: the longest
// prompt plus output, ties to the later turn.
func contextTurn(reqs []Request, parents []int) int {
	best := parents[0]
	for _, p := range parents[1:] {
		if reqs[p].InputLength+reqs[p].OutputLength >= reqs[best].InputLength+reqs[best].OutputLength {
			best = p
		}
	}
	return best
}
