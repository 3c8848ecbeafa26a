package servermetrics

import (
	"strconv"

	"github.com/simbench/simbench/results"
)

// vLLM's speculative decoding counters, as the export keys them (without
// _total), and the label of the per-position one.
const (
	vllmSpecDrafts      = "vllm:spec_decode_num_drafts"
	vllmSpecDraftTokens = "vllm:spec_decode_num_draft_tokens"
	vllmSpecAccepted    = "vllm:spec_decode_num_accepted_tokens"
	vllmSpecPerPos      = "vllm:spec_decode_num_accepted_tokens_per_pos"
	specPositionLabel   = "position"
)

// SpecDecode reads vLLM's speculative decoding counters from the export:
// their deltas over its window, summed over endpoints, engines, models
// and pool roles, the per-position one by its position label. ok is false
// when the window saw no drafts (no speculative decoding, or no family).
// results.SpecDecode derives the rates.
func SpecDecode(e *Export) (results.SpecDecode, bool) {
	s := results.SpecDecode{Drafts: counterTotal(e, vllmSpecDrafts), DraftTokens: counterTotal(e, vllmSpecDraftTokens),
		AcceptedTokens: counterTotal(e, vllmSpecAccepted)}
	if !s.Valid() {
		return results.SpecDecode{}, false
	}
	s.AcceptedPerPos = perPosition(e.Metrics[vllmSpecPerPos])
	return s, true
}

// counterTotal is a counter family's delta summed over its series; 0 when
// the export lacks it or it is not a counter.
func counterTotal(e *Export, family string) float64 {
	m, ok := e.Metrics[family]
	if !ok || m.Type != KindCounter {
		return 0
	}
	return sumStat(m, "total")
}

// perPosition sums the per-position counter by position (0, 1, …); a
// position no series has counts 0, and series without a numeric position
// are ignored.
func perPosition(m *Metric) []float64 {
	if m == nil || m.Type != KindCounter {
		return nil
	}
	var out []float64
	for i := range m.Series {
		pos, err := strconv.Atoi(m.Series[i].Labels[specPositionLabel])
		if err != nil || pos < 0 || pos > maxSpecPositions {
			continue
		}
		for len(out) <= pos {
			out = append(out, 0)
		}
		v, _ := m.Series[i].Stat("total")
		out[pos] += v
	}
	return out
}

// maxSpecPositions bounds the position label read (vLLM drafts at most a
// few tens of tokens); a larger one is not a draft position.
const maxSpecPositions = 1024
