package traces

import (
	"encoding/json"
	"fmt"
)

// dagBytesPerToken is the prompt estimate of ReadAIPerfDAG: about 4 bytes
// of English text per token, the estimate the simulator uses for a
// literal prompt without a token count.
const dagBytesPerToken = 4

// dagMessages reads a turn's messages: a non-empty list of objects with a
// role. It returns their token estimate and whether one is a system message.
func dagMessages(v json.RawMessage, field string, fail failFunc) (tokens int, system bool, err error) {
	var msgs []json.RawMessage
	if v = nonNull(v); v == nil {
		return 0, false, fail(field, "Field required")
	}
	if err := json.Unmarshal(v, &msgs); err != nil || len(msgs) == 0 {
		return 0, false, fail(field, "must be a non-empty list of messages, got %s", clip(v))
	}
	for i, raw := range msgs {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || m["role"] == nil {
			return 0, false, fail(field, "Each message must have a 'role' key, but message at index %d does not", i)
		}
		var role string
		_ = json.Unmarshal(m["role"], &role)
		system = system || role == "system"
		tokens += max(1, (messageBytes(m)+dagBytesPerToken-1)/dagBytesPerToken)
	}
	if tokens > MaxTokens {
		return 0, false, fail(field, "about %d tokens: more than %d", tokens, MaxTokens)
	}
	return tokens, system, nil
}

// messageBytes is the length of a message's text: its content string, the
// text of its content parts, and its tool_calls as JSON.
func messageBytes(m map[string]json.RawMessage) int {
	n := len(nonNull(m["tool_calls"]))
	var s string
	if json.Unmarshal(m["content"], &s) == nil {
		return n + len(s)
	}
	var parts []struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(m["content"], &parts) == nil {
		for _, p := range parts {
			if p.Text != nil {
				n += len(*p.Text)
			}
		}
	}
	return n
}

// dagForks reads forks: bare session ids, or {"child", "background"}.
func dagForks(v json.RawMessage, field string, fail failFunc) ([]dagFork, error) {
	var entries []json.RawMessage
	if err := dagList(v, field, &entries, fail); err != nil {
		return nil, err
	}
	forks := make([]dagFork, 0, len(entries))
	for i, raw := range entries {
		var f dagFork
		if json.Unmarshal(raw, &f.child) != nil {
			at := fmt.Sprintf("%s.%d.", field, i)
			obj, err := dagObject(raw, at, []string{"child", "background"}, fail)
			if err != nil {
				return nil, err
			}
			if f.child, err = dagString(obj["child"], at+"child", fail); err != nil {
				return nil, err
			}
			if b := nonNull(obj["background"]); b != nil && json.Unmarshal(b, &f.background) != nil {
				return nil, fail(at+"background", "must be true or false, got %s", clip(b))
			}
		}
		if f.child == "" {
			return nil, fail(fmt.Sprintf("%s.%d", field, i), "must name a session")
		}
		forks = append(forks, f)
	}
	return forks, nil
}

// dagSpawns reads spawns: bare session ids (joined at the next turn), or
// {"children", "join_at"}. Bare ids collapse into one entry, as in AIPerf.
func dagSpawns(v json.RawMessage, field string, fail failFunc) ([]dagSpawn, error) {
	var entries []json.RawMessage
	if err := dagList(v, field, &entries, fail); err != nil {
		return nil, err
	}
	var bare dagSpawn
	var spawns []dagSpawn
	for i, raw := range entries {
		at := fmt.Sprintf("%s.%d", field, i)
		var id string
		if json.Unmarshal(raw, &id) == nil {
			if id == "" {
				return nil, fail(at, "must name a session")
			}
			bare.children = append(bare.children, id)
			continue
		}
		s, err := dagSpawnObject(raw, at+".", fail)
		if err != nil {
			return nil, err
		}
		spawns = append(spawns, s)
	}
	if len(bare.children) > 0 {
		bare.joinAt = 0 // the next turn, resolved by the graph
		spawns = append([]dagSpawn{bare}, spawns...)
	}
	return spawns, nil
}

// dagSpawnObject reads {"children": [...], "join_at": K}; joinAt 0 means
// the next turn.
func dagSpawnObject(raw json.RawMessage, at string, fail failFunc) (dagSpawn, error) {
	var s dagSpawn
	obj, err := dagObject(raw, at, []string{"children", "join_at"}, fail)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(orEmpty(obj["children"]), &s.children); err != nil || len(s.children) == 0 || hasEmpty(s.children) {
		return s, fail(at+"children", "must be a non-empty list of session ids")
	}
	if v := nonNull(obj["join_at"]); v != nil {
		if s.joinAt, err = nonNegInt(v, at+"join_at", fail); err != nil {
			return s, err
		}
		if s.joinAt < 1 {
			return s, fail(at+"join_at", "must be a later turn's index, got %s", clip(v))
		}
	}
	return s, nil
}

func hasEmpty(ids []string) bool {
	for _, id := range ids {
		if id == "" {
			return true
		}
	}
	return false
}

// dagList decodes an optional JSON list.
func dagList(v json.RawMessage, field string, out *[]json.RawMessage, fail failFunc) error {
	if v = nonNull(v); v == nil {
		return nil
	}
	if err := json.Unmarshal(v, out); err != nil {
		return fail(field, "must be a list, got %s", clip(v))
	}
	return nil
}
