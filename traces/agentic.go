package traces

import (
	"fmt"
	"slices"
)

// TurnSpec is one turn of an agent session for BuildSession.
type TurnSpec struct {
	// Parents are the turns it waits for (Request.Parents); it continues the
	// context of the one with the longest (prompt plus output; ties: the
	// later turn). Empty: the previous turn.
	Parents      []int
	NewTokens    int     // tokens it adds to that context: the tool result and the next instruction
	OutputLength int     // tokens it asks for
	DelayMs      float64 // the tool wait after its last parent ends
	// Context, when set, is the turn (one of those it waits for) whose
	// context it continues, instead of the longest.
	Context *int
	// Fresh starts a context of its own: the prompt is NewTokens tokens
	// whatever it waits for (a sub-agent that does not inherit its
	// parent's history).
	Fresh bool
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
		if ps := ParentTurns(&r); len(ps) > 0 && !ts.Fresh {
			c := contextTurn(reqs, ps)
			if ts.Context != nil {
				if !slices.Contains(ps, *ts.Context) {
					return nil, fmt.Errorf("session %q turn %d: context turn %d is not one it waits for (%v)", id, t, *ts.Context, ps)
				}
				c = *ts.Context
			}
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

// AgentInfo describes a workload's multi-turn sessions as DAGs of turns
// (simbench trace info).
type AgentInfo struct {
	// Sessions counts the sessions of more than one turn; the
	// distributions are over them.
	Sessions int  `json:"sessions"`
	Turns    Dist `json:"turns"` // turns per session
	// Depth is the longest chain of turns each waiting for the one before
	// (a linear conversation's depth is its turn count).
	Depth Dist `json:"depth"`
	// FanOut is the number of turns waiting for a turn, over the turns
	// some turn waits for (sub-agent branches: > 1).
	FanOut Dist `json:"fan_out"`
	// ToolWaitMs is each later turn's wait after its parents end (DelayMs).
	ToolWaitMs Dist `json:"tool_wait_ms"`
	// ContextGrowth is each later turn's input length minus that of the
	// turn whose context it continues (tokens): the longest of the turns it
	// waits for whose first hash block it shares (any, without hash_ids).
	// A turn that starts a fresh context (a spawned sub-agent) has none.
	ContextGrowth Dist `json:"context_growth"`
	// Continued counts the turns ContextGrowth is over.
	Continued int `json:"continued_turns"`
}

// continues reports whether r may continue p's context: they start with
// the same hash block, or one of them has no hash_ids to tell.
func continues(r, p *Request) bool {
	return len(r.HashIDs) == 0 || len(p.HashIDs) == 0 || r.HashIDs[0] == p.HashIDs[0]
}

// describeAgents returns the AgentInfo of reqs, nil when no session has
// more than one turn.
func describeAgents(reqs []Request) *AgentInfo {
	var info AgentInfo
	var turns, depth, fan, wait, growth []float64
	for _, s := range sessions(reqs) {
		if len(s.indices) < 2 {
			continue
		}
		info.Sessions++
		turns = append(turns, float64(len(s.indices)))
		byTurn := make(map[int]int, len(s.indices))
		for _, i := range s.indices {
			byTurn[reqs[i].Turn] = i
		}
		level := make(map[int]int, len(s.indices))
		kids := make(map[int]int, len(s.indices))
		deepest := 0
		for _, i := range s.indices {
			r := &reqs[i]
			level[r.Turn] = 1
			var ctx *Request
			ps := ParentTurns(r)
			for _, p := range ps {
				level[r.Turn] = max(level[r.Turn], level[p]+1)
				kids[p]++
				if q, ok := byTurn[p]; ok && continues(r, &reqs[q]) && (ctx == nil || reqs[q].InputLength+reqs[q].OutputLength >= ctx.InputLength+ctx.OutputLength) {
					ctx = &reqs[q]
				}
			}
			if len(ps) > 0 {
				wait = append(wait, r.DelayMs)
			}
			if ctx != nil {
				growth = append(growth, float64(r.InputLength-ctx.InputLength))
			}
			deepest = max(deepest, level[r.Turn])
		}
		depth = append(depth, float64(deepest))
		for _, n := range kids {
			fan = append(fan, float64(n))
		}
	}
	if info.Sessions == 0 {
		return nil
	}
	info.Turns, info.Depth, info.FanOut = distOf(turns), distOf(depth), distOf(fan)
	info.ToolWaitMs, info.ContextGrowth, info.Continued = distOf(wait), distOf(growth), len(growth)
	return &info
}
