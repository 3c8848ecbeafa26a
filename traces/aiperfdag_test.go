package traces

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAIPerfDAGGolden reads AIPerf's documented dag_jsonl examples (dag.md's
// minimal FORK example and its three-root example) and a file of agents
// written to the same schema (spawns joined later, a background fork,
// tool results, delays, a second root).
func TestAIPerfDAGGolden(t *testing.T) {
	for _, file := range []string{"aiperf_dag_small.jsonl", "aiperf_dag_three_roots.jsonl", "aiperf_dag_agents.jsonl"} {
		t.Run(file, func(t *testing.T) { agenticGolden(t, file, FormatAIPerfDAG, 16) })
	}
}

// TestAIPerfDAGSemantics: a FORK child continues its parent's context
// (prompt, answer, its own messages); a SPAWN child starts fresh; the
// joining turn waits for its own previous turn and each child's last turn
// and continues its own context; delays are the turns' own, in ms.
func TestAIPerfDAGSemantics(t *testing.T) {
	rows := `{"session_id":"p","turns":[{"messages":[{"role":"user","content":"` + strings.Repeat("a", 40) + `"}],"max_tokens":20,"spawns":["c"]},` +
		`{"messages":[{"role":"user","content":"bbbb"}],"max_tokens":5,"delay":7.5,"forks":["f"]}]}
{"session_id":"c","turns":[{"messages":[{"role":"user","content":"cccccccc"}],"max_tokens":3,"delay":2}]}
{"session_id":"f","turns":[{"messages":[{"role":"user","content":"dd"},{"role":"user","content":[{"type":"text","text":"eeee"}]}],"max_tokens":1}]}`
	wl, warns, err := ReadAIPerfDAG(strings.NewReader(rows), "t.jsonl", 16)
	require.NoError(t, err)
	assert.Empty(t, warns)
	require.Len(t, wl.Requests, 4)
	type turn struct {
		Turn, ISL, OSL int
		Parents        []int
		Delay          float64
	}
	var got []turn
	for _, r := range wl.Requests {
		assert.Equal(t, "p", r.SessionID)
		got = append(got, turn{r.Turn, r.InputLength, r.OutputLength, r.Parents, r.DelayMs})
	}
	assert.Equal(t, []turn{
		{0, 10, 20, nil, 0},          // p turn 0: 40 bytes, 10 tokens
		{1, 2, 3, []int{0}, 2},       // c: fresh, 8 bytes
		{2, 31, 5, []int{0, 1}, 7.5}, // p turn 1 joins c: 10 + 20 + 1
		{3, 38, 1, []int{2}, 0},      // f forks from p turn 1: 31 + 5 + 1 + 1
	}, got)
	assert.Equal(t, wl.Requests[0].HashIDs, wl.Requests[2].HashIDs[:1], "the join continues p's own context")
	assert.Equal(t, wl.Requests[2].HashIDs[:2], wl.Requests[3].HashIDs[:2], "the fork continues p turn 1")
	assert.NotEqual(t, wl.Requests[0].HashIDs[0], wl.Requests[1].HashIDs[0], "the spawn starts fresh")
}

func TestReadAIPerfDAGErrors(t *testing.T) {
	conv := func(id, turns string) string { return `{"session_id":"` + id + `","turns":[` + turns + `]}` }
	turn := func(extra string) string {
		return `{"messages":[{"role":"user","content":"hi"}],"max_tokens":4` + extra + `}`
	}
	for _, tc := range []struct{ name, rows, want string }{
		{"json", `{"session_id":`, `t.jsonl:1: malformed row: want a JSON object (a conversation)`},
		{"no session", `{"turns":[` + turn("") + `]}`, `t.jsonl:1: field "session_id": Field required`},
		{"duplicate", conv("a", turn("")) + "\n" + conv("a", turn("")), `t.jsonl:2: field "session_id": duplicate session_id "a" (line 1)`},
		{"no turns", `{"session_id":"a","turns":[]}`, `t.jsonl:1: field "turns": must be a non-empty list of turns`},
		{"unknown key", conv("a", turn(`,"max_token":3`)),
			`t.jsonl:1: field "turns.0.max_token": Extra inputs are not permitted (AIPerf's schema knows messages, model, max_tokens, tools, extra, forks, spawns, delay)`},
		{"no messages", conv("a", `{"max_tokens":3}`), `t.jsonl:1: field "turns.0.messages": Field required`},
		{"no role", conv("a", `{"messages":[{"content":"x"}]}`),
			`t.jsonl:1: field "turns.0.messages": Each message must have a 'role' key, but message at index 0 does not`},
		{"max_tokens", conv("a", turn(`,"max_tokens":true`)), `t.jsonl:1: field "turns.0.max_tokens": must be a number, got true`},
		{"delay", conv("a", turn("")+","+turn(`,"delay":-1`)), `t.jsonl:1: field "turns.1.delay": must be >= 0, got -1`},
		{"target", conv("a", turn(`,"forks":["b"]`)), `t.jsonl:1: field "turns.0.forks": branch target "b" not declared`},
		{"fork not last", conv("a", turn(`,"forks":["b"]`)+","+turn("")) + "\n" + conv("b", turn("")),
			`t.jsonl:1: field "turns.0.forks": session "a" turn 0 has foreground FORK branches but is not the last turn (use {"child": ..., "background": true})`},
		{"two fork parents", conv("a", turn(`,"forks":["c"]`)) + "\n" + conv("b", turn(`,"forks":["c"]`)) + "\n" + conv("c", turn("")),
			`t.jsonl:2: field "turns.0.forks": session "c" forked by both "a" and "b"; FORK-mode children require a single parent`},
		{"join_at", conv("a", turn(`,"spawns":[{"children":["b"],"join_at":1}]`)) + "\n" + conv("b", turn("")),
			`t.jsonl:1: field "turns.0.spawns": join_at 1 must be > 0 (the spawning turn) and < 1 (the turn count)`},
		{"cycle", conv("a", turn(`,"spawns":["b"]`)) + "\n" + conv("b", turn(`,"spawns":["a"]`)),
			`t.jsonl:1: field "turns": cycle detected: a -> b -> a`},
		{"system", conv("a", turn("")+`,{"messages":[{"role":"system","content":"x"}]}`),
			`t.jsonl:1: field "turns.1.messages": session "a" turn 1: non-root turns may not contain a 'system' message (it would land after the context's first)`},
		{"orchestrator", `{"session_id":"s","orchestrator":true,"spawns":["a"]}`,
			`t.jsonl:1: field "orchestrator": AIPerf's orchestrator conversations and pre-session spawns are not supported: a simbench session has one root turn`},
		{"context mode", `{"session_id":"s","context_mode":"x","turns":[` + turn("") + `]}`,
			`t.jsonl:1: field "context_mode": want deltas_without_responses or message_array_with_responses, got "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadAIPerfDAG(strings.NewReader(tc.rows), "t.jsonl", 16)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// TestAIPerfDAGExpansionBound: spawned templates copied once per spawn
// cannot blow a file up without limit.
func TestAIPerfDAGExpansionBound(t *testing.T) {
	var b strings.Builder
	const levels = 20
	for i := range levels {
		spawns := ""
		if i < levels-1 {
			spawns = `,"spawns":["l` + string(rune('a'+i+1)) + `","l` + string(rune('a'+i+1)) + `"]`
		}
		b.WriteString(`{"session_id":"l` + string(rune('a'+i)) + `","turns":[{"messages":[{"role":"user","content":"x"}],"max_tokens":1` + spawns + `}]}` + "\n")
	}
	_, _, err := ReadAIPerfDAG(strings.NewReader(b.String()), "t.jsonl", 16)
	require.ErrorContains(t, err, "expands to more than 65536 turns")
}

// FuzzReadAIPerfDAG: reading never panics, an accepted file's sessions
// are valid DAGs, and its workload survives WriteJSONL → ReadMooncake.
func FuzzReadAIPerfDAG(f *testing.F) {
	for _, name := range []string{"aiperf_dag_small.jsonl", "aiperf_dag_three_roots.jsonl", "aiperf_dag_agents.jsonl"} {
		data, err := os.ReadFile(filepath.Join(agenticDir, name))
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"session_id":"a","context_mode":"message_array_with_responses","turns":[{"messages":[{"role":"system","content":"x"}],"spawns":[{"children":["b"]}]},{"messages":[{"role":"user","content":[{"type":"image_url"}]}],"delay":1e-3}]}` + "\n" +
		`{"session_id":"b","turns":[{"messages":[{"role":"assistant","tool_calls":[{"id":"1"}]}],"max_tokens":2,"forks":[{"child":"c","background":true}]},{"messages":[{"role":"user","content":""}]}]}` + "\n" +
		`{"session_id":"c","turns":[{"messages":[{"role":"user"}],"max_tokens":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		wl, _, err := ReadAIPerfDAG(bytes.NewReader(data), "fuzz.jsonl", 16)
		if err != nil {
			return
		}
		require.NoError(t, CheckParents(wl.Requests))
		assertRoundTrip(t, wl)
		_ = Describe(wl)
	})
}
