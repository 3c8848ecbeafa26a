package results

import (
	"cmp"
	"slices"
)

// Session metrics: simbench's extensions for multi-turn and agentic
// workloads, one value per session (the requests sharing a
// conversation_id, warmup excluded, failed ones included). They are
// computed only when some session has more than one request.
//
//   - session_latency: from the session's first request start to its last
//     request end.
//   - session_turns: its requests.
//   - session_server_wait: the time at least one of its requests is in
//     flight (the union of their start..end spans): the agent waiting on
//     the server.
//   - session_tool_wait: session_latency − session_server_wait, the time
//     nothing of it is in flight: tool calls, think time and the client's
//     own overhead between a turn's end and the next send.
const (
	TagSessionLatency    = "session_latency"
	TagSessionTurns      = "session_turns"
	TagSessionServerWait = "session_server_wait"
	TagSessionToolWait   = "session_tool_wait"
)

// Span is one request's time in flight, wall-clock ns.
type Span struct{ StartNs, EndNs int64 }

// SessionStats is one session's metrics (see the Tag constants).
type SessionStats struct {
	LatencyMs, ServerWaitMs, ToolWaitMs float64
	Turns                               int
}

// SessionOf computes the metrics of a session whose requests were in
// flight over spans (in any order; spans ending before they start count
// as instants).
func SessionOf(spans []Span) SessionStats {
	if len(spans) == 0 {
		return SessionStats{}
	}
	s := slices.Clone(spans)
	slices.SortFunc(s, func(a, b Span) int { return cmp.Compare(a.StartNs, b.StartNs) })
	first, last := s[0].StartNs, s[0].EndNs
	var busy int64
	curStart, curEnd := s[0].StartNs, max(s[0].EndNs, s[0].StartNs)
	for _, sp := range s[1:] {
		end := max(sp.EndNs, sp.StartNs)
		last = max(last, end)
		if sp.StartNs > curEnd {
			busy += curEnd - curStart
			curStart, curEnd = sp.StartNs, end
			continue
		}
		curEnd = max(curEnd, end)
	}
	busy += curEnd - curStart
	lat := max(last, curEnd) - first
	return SessionStats{LatencyMs: float64(lat) / nsPerMs, ServerWaitMs: float64(busy) / nsPerMs,
		ToolWaitMs: float64(lat-busy) / nsPerMs, Turns: len(spans)}
}

// sessionAcc collects each session's spans in order of first appearance.
type sessionAcc struct {
	byID  map[string]int
	spans [][]Span
}

func (s *sessionAcc) add(m *RecordMetrics) {
	id := m.Meta.ConversationID
	if id == "" {
		return
	}
	if s.byID == nil {
		s.byID = map[string]int{}
	}
	k, ok := s.byID[id]
	if !ok {
		k = len(s.spans)
		s.byID[id] = k
		s.spans = append(s.spans, nil)
	}
	s.spans[k] = append(s.spans[k], Span{m.Meta.RequestStartNs, m.Meta.RequestEndNs})
}

// addTo adds the session metrics to p when some session has more than one
// request.
func (s *sessionAcc) addTo(p *Profile) {
	if !slices.ContainsFunc(s.spans, func(sp []Span) bool { return len(sp) > 1 }) {
		return
	}
	var lat, turns, server, tool []float64
	for _, sp := range s.spans {
		st := SessionOf(sp)
		lat, server, tool = append(lat, st.LatencyMs), append(server, st.ServerWaitMs), append(tool, st.ToolWaitMs)
		turns = append(turns, float64(st.Turns))
	}
	p.addDistribution(TagSessionLatency, lat)
	p.addDistribution(TagSessionTurns, turns)
	p.addDistribution(TagSessionServerWait, server)
	p.addDistribution(TagSessionToolWait, tool)
}
