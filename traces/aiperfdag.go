package traces

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// FormatAIPerfDAG is AIPerf's dag_jsonl conversation file (ReadAIPerfDAG).
const FormatAIPerfDAG = "dag_jsonl"

// dagConv is one line of a dag_jsonl file: a conversation.
type dagConv struct {
	id    string
	line  int
	turns []dagTurn
	// isolated: context_mode message_array_with_responses (each turn's
	// messages are its whole prompt).
	isolated bool
}

// dagTurn is one turn of a conversation.
type dagTurn struct {
	newTokens, maxTokens int
	delayMs              float64
	system               bool // it carries a system message
	forks                []dagFork
	spawns               []dagSpawn
}

// dagFork is a forks entry: a bare string, or {"child", "background"}.
type dagFork struct {
	child      string
	background bool
}

// dagSpawn is a spawns entry: a bare string (joined at the next turn) or
// {"children", "join_at"}.
type dagSpawn struct {
	children []string
	joinAt   int // the turn that waits for the children; 0: the next one (after the last: none)
}

// The keys AIPerf's schema knows (DagConversation, DagTurn); any other is
// refused, as AIPerf refuses it.
var (
	dagConvKeys = []string{"session_id", "turns", "orchestrator", "spawns", "think_time_ms", "think_time_sigma",
		"think_time_min_ms", "think_time_max_ms", "rounds", "context_mode", "pre_session_spawns"}
	dagTurnKeys = []string{"messages", "model", "max_tokens", "tools", "extra", "forks", "spawns", "delay"}
	// dagUnsupported are AIPerf's request-less orchestrators and
	// pre-session spawns: simbench replays requests, and a session has one root.
	dagUnsupported = []string{"orchestrator", "spawns", "think_time_ms", "think_time_sigma",
		"think_time_min_ms", "think_time_max_ms", "rounds", "pre_session_spawns"}
)

// ReadAIPerfDAG reads AIPerf's dag_jsonl file (--custom-dataset-type
// dag_jsonl, docs/benchmark-modes/dag.md): one conversation per line,
// {"session_id", "turns": [...]}, each turn {"messages", "max_tokens",
// "delay" (ms, before the turn is sent), "forks", "spawns", "model",
// "tools", "extra"}. A conversation's turns run one after another; when a
// turn completes:
//   - forks (FORK) start the named conversations, which continue its
//     context (its prompt plus its answer). A bare name ends the parent
//     (only on its last turn); {"child", "background": true} lets it go on.
//   - spawns (SPAWN) start the named conversations with a fresh context;
//     the parent's next turn (a bare name) or turn join_at waits for each
//     child's last turn. A bare spawn on the last turn is joined by nothing.
//
// A conversation no other one names is a root: it and everything it forks
// and spawns, transitively, are one simbench session (named by its
// session_id) of DAG turns, closed loop (--concurrency caps sessions). A
// conversation spawned from several places runs once per place.
//
// Prompts are token counts: the text of a turn's messages (string content,
// text parts, tool_calls as JSON) at about 4 bytes per token, at least one
// per message, added to the context the turn continues (prefix-consistent
// hash_ids of blockSize tokens); tools, images and the chat template are
// not counted, nor are prompts shared between sessions. max_tokens is the
// output length (absent: the server's default, which the simulator refuses).
//
// AIPerf's orchestrator conversations (no requests of their own) and
// pre_session_spawns are refused, as are its load-time errors: unknown
// keys, duplicate session ids, unknown targets, cycles, a FORK child of two
// parents, a system message on a turn that does not start a context.
// Errors name the file, line and field (AIPerf's dotted path).
func ReadAIPerfDAG(r io.Reader, name string, blockSize int) (*Workload, []Warning, error) {
	if blockSize < 1 {
		return nil, nil, fmt.Errorf("%s: hash block size must be > 0, got %d", name, blockSize)
	}
	g := &dagGraph{file: name, ids: map[string]int{}}
	if err := scanRows(r, name, g.add); err != nil {
		return nil, nil, err
	}
	if len(g.convs) == 0 {
		return nil, nil, fmt.Errorf("%s: no conversations in the file", name)
	}
	reqs, err := g.expand(blockSize)
	if err != nil {
		return nil, nil, err
	}
	return &Workload{Requests: reqs, BlockSize: blockSize, Source: name, Digest: ComputeDigest(reqs)}, g.warnings(), nil
}

// add parses one conversation line.
func (g *dagGraph) add(line []byte, lineNo int) error {
	fail := func(field, format string, args ...any) error {
		return &RowError{File: g.file, Line: lineNo, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	obj, err := dagObject(line, "", dagConvKeys, fail)
	if err != nil {
		return err
	}
	for _, k := range dagUnsupported {
		if v := nonNull(obj[k]); v != nil && string(v) != "false" && string(v) != "[]" {
			return fail(k, "AIPerf's orchestrator conversations and pre-session spawns are not supported: a simbench session has one root turn")
		}
	}
	c := dagConv{line: lineNo}
	if c.id, err = dagString(obj["session_id"], "session_id", fail); err != nil {
		return err
	}
	if i, dup := g.ids[c.id]; dup {
		return fail("session_id", "duplicate session_id %q (line %d)", c.id, g.convs[i].line)
	}
	if c.isolated, err = dagContextMode(obj["context_mode"], fail); err != nil {
		return err
	}
	var turns []json.RawMessage
	if err := json.Unmarshal(orEmpty(obj["turns"]), &turns); err != nil || len(turns) == 0 {
		return fail("turns", "must be a non-empty list of turns")
	}
	for i, raw := range turns {
		t, err := parseDAGTurn(raw, fmt.Sprintf("turns.%d.", i), fail)
		if err != nil {
			return err
		}
		c.turns = append(c.turns, t)
	}
	g.ids[c.id] = len(g.convs)
	g.convs = append(g.convs, c)
	return nil
}

// dagObject decodes a JSON object and refuses keys outside known.
func dagObject(raw []byte, path string, known []string, fail failFunc) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		if path == "" {
			return nil, fail("", "malformed row: want a JSON object (a conversation)")
		}
		return nil, fail(strings.TrimSuffix(path, "."), "must be a JSON object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			return nil, fail(path+k, "Extra inputs are not permitted (AIPerf's schema knows %s)", strings.Join(known, ", "))
		}
	}
	return obj, nil
}

func orEmpty(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

// dagString reads a required non-empty string.
func dagString(v json.RawMessage, field string, fail failFunc) (string, error) {
	var s string
	if v = nonNull(v); v == nil {
		return "", fail(field, "Field required")
	}
	if err := json.Unmarshal(v, &s); err != nil || s == "" {
		return "", fail(field, "must be a non-empty string, got %s", clip(v))
	}
	return s, nil
}

// dagContextMode reads context_mode: true for message_array_with_responses.
func dagContextMode(v json.RawMessage, fail failFunc) (bool, error) {
	if v = nonNull(v); v == nil {
		return false, nil
	}
	var s string
	_ = json.Unmarshal(v, &s)
	switch s {
	case "deltas_without_responses":
		return false, nil
	case "message_array_with_responses":
		return true, nil
	}
	return false, fail("context_mode", "want deltas_without_responses or message_array_with_responses, got %s", clip(v))
}

// parseDAGTurn reads one turn; path is its field prefix ("turns.2.").
func parseDAGTurn(raw json.RawMessage, path string, fail failFunc) (dagTurn, error) {
	var t dagTurn
	obj, err := dagObject(raw, path, dagTurnKeys, fail)
	if err != nil {
		return t, err
	}
	if t.newTokens, t.system, err = dagMessages(obj["messages"], path+"messages", fail); err != nil {
		return t, err
	}
	if v := nonNull(obj["max_tokens"]); v != nil {
		if t.maxTokens, err = nonNegInt(v, path+"max_tokens", fail); err != nil {
			return t, err
		}
		if t.maxTokens < 1 {
			return t, fail(path+"max_tokens", "must be >= 1, got %s", clip(v))
		}
	}
	if v := nonNull(obj["delay"]); v != nil {
		if t.delayMs, err = nonNegFloat(v, path+"delay", fail); err != nil {
			return t, err
		}
	}
	if t.forks, err = dagForks(obj["forks"], path+"forks", fail); err != nil {
		return t, err
	}
	t.spawns, err = dagSpawns(obj["spawns"], path+"spawns", fail)
	return t, err
}
