package pacer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

// agentSession is one agent's DAG: a planner turn fans out into two
// sub-agent branches (tool waits 5 and 7 ms), a join waits for both (3 ms),
// then a last turn follows the join without Parents (the previous turn).
func agentSession(id string, row int, first traces.Request) []traces.Request {
	first.SessionID, first.Row = id, row
	reqs := []traces.Request{first,
		{SessionID: id, Turn: 1, Parents: []int{0}, DelayMs: 5},
		{SessionID: id, Turn: 2, Parents: []int{0}, DelayMs: 7},
		{SessionID: id, Turn: 3, Parents: []int{1, 2}, DelayMs: 3},
		{SessionID: id, Turn: 4, DelayMs: 1},
	}
	for i := range reqs {
		reqs[i].Row, reqs[i].InputLength, reqs[i].OutputLength = row+i, 10, 5
	}
	return reqs
}

// TestPacerDAGAnalytic: on a virtual clock with known service times every
// turn is sent exactly when the last of its parents completed plus its
// tool wait; the two branches are in flight at once.
func TestPacerDAGAnalytic(t *testing.T) {
	t.Parallel()
	reqs := agentSession("a", 0, traces.Request{TimestampMs: 10, HasTimestamp: true})
	service := []time.Duration{20 * ms, 30 * ms, 11 * ms, 4 * ms, 2 * ms}
	got := simulate(t, newPacer(t, reqs, 0, Limits{}), func(req int) time.Duration { return service[req] })
	require.Len(t, got, 5)
	at := map[int]time.Duration{}
	done := map[int]time.Duration{}
	for _, s := range got {
		at[s.Req], done[s.Req] = s.At, s.Done
		assert.Equal(t, s.Intended, s.At, "no cap: sent when due")
	}
	for i, r := range reqs {
		want := 10 * ms
		for _, p := range traces.ParentTurns(&r) {
			want = max(want, done[p]+time.Duration(r.DelayMs*float64(ms)))
		}
		assert.Equal(t, want, at[i], "turn %d", i)
	}
	assert.Equal(t, durs(10, 35, 37, 68, 73), []time.Duration{at[0], at[1], at[2], at[3], at[4]})
	assert.Less(t, at[2], done[1], "the branches overlap")
}

// TestPacerDAGSessionCap: with an agentic workload the cap counts sessions:
// under --concurrency 1 a session's two branches still run together, and
// the next session starts only when the last turn of the first completed.
func TestPacerDAGSessionCap(t *testing.T) {
	t.Parallel()
	reqs := append(agentSession("a", 0, traces.Request{}), agentSession("b", 5, traces.Request{})...)
	got := simulate(t, newPacer(t, reqs, 1, Limits{}), constService(10*ms))
	var rows []int
	var ats []time.Duration
	for _, s := range got {
		rows, ats = append(rows, s.Req), append(ats, s.At)
	}
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, rows)
	assert.Equal(t, durs(0, 15, 17, 30, 41, 51, 66, 68, 81, 92), ats)
}

// TestPacerDAGRejectsBadParents: parents outside the session are an error.
func TestPacerDAGRejectsBadParents(t *testing.T) {
	t.Parallel()
	reqs := agentSession("a", 0, traces.Request{})
	reqs[1].Warmup = true // its children's parent is in another phase
	reqs[0].Warmup = true
	reqs[3].Parents = []int{0, 2}
	_, err := New(&traces.Workload{Requests: reqs, Concurrency: 1}, Limits{})
	require.ErrorContains(t, err, `waits for turn 0, which is not an earlier turn of its session in its phase`)
	reqs[3].Parents = []int{3}
	_, err = New(&traces.Workload{Requests: reqs, Concurrency: 1}, Limits{})
	require.ErrorContains(t, err, `field "parents"`)
}
