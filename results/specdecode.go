package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Speculative decoding's run-level values: simbench extensions of the
// aggregate, from the server's spec-decode counters over the profiling
// window (vLLM's vllm:spec_decode_* families; a simulated vLLM worker
// exposes the same). AIPerf has none of them.
//
//   - spec_decode_drafts, spec_decode_draft_tokens,
//     spec_decode_accepted_tokens: the counters' deltas (a draft is one
//     sequence's drafting in one step).
//   - spec_decode_acceptance_rate = accepted tokens / draft tokens (vLLM's
//     draft acceptance rate).
//   - spec_decode_mean_accepted_length = 1 + accepted tokens / drafts: the
//     tokens a drafting sequence emits a step (vLLM's mean acceptance
//     length).
//   - spec_decode_acceptance_rate_pos_<i> = accepted tokens at draft
//     position i (from 0) / drafts: the share of drafts whose position i
//     was accepted (vLLM's per-position acceptance rate).
const (
	TagSpecDrafts             = "spec_decode_drafts"
	TagSpecDraftTokens        = "spec_decode_draft_tokens"
	TagSpecAcceptedTokens     = "spec_decode_accepted_tokens"
	TagSpecAcceptanceRate     = "spec_decode_acceptance_rate"
	TagSpecMeanAcceptedLength = "spec_decode_mean_accepted_length"
	// TagSpecPosPrefix followed by a position (0, 1, …) is that position's
	// acceptance rate.
	TagSpecPosPrefix = "spec_decode_acceptance_rate_pos_"
)

// specPosDef is the definition every per-position tag shares but its
// header; it sits in defs' order where the positions are written.
var specPosDef = Def{Tag: TagSpecPosPrefix, Header: "Spec Decode Acceptance Rate At Position",
	Unit: "ratio", Kind: KindAggregate, LargerIsBetter: true, Extension: true}

// specPosLookup is the definition of a per-position tag (ok false for any
// other tag).
func specPosLookup(tag string) (Def, bool) {
	pos, ok := SpecPosition(tag)
	if !ok {
		return Def{}, false
	}
	d := specPosDef
	d.Tag, d.Header = tag, fmt.Sprintf("%s %d", specPosDef.Header, pos)
	return d, true
}

// SpecPosition is the draft position a per-position tag names.
func SpecPosition(tag string) (int, bool) {
	s, ok := strings.CutPrefix(tag, TagSpecPosPrefix)
	if !ok || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// SpecPosTag is the tag of position pos's acceptance rate.
func SpecPosTag(pos int) string { return TagSpecPosPrefix + strconv.Itoa(pos) }

// SpecDecode is a run's speculative decoding counters over its window,
// summed over the server's engines.
type SpecDecode struct {
	Drafts, DraftTokens, AcceptedTokens float64
	// AcceptedPerPos is the accepted tokens at each draft position, from 0.
	AcceptedPerPos []float64
}

// Valid says the counters saw drafts: only then are the rates defined.
func (s SpecDecode) Valid() bool { return s.Drafts > 0 && s.DraftTokens > 0 }

// AcceptanceRate is accepted / draft tokens.
func (s SpecDecode) AcceptanceRate() float64 { return s.AcceptedTokens / s.DraftTokens }

// MeanAcceptedLength is 1 + accepted tokens / drafts.
func (s SpecDecode) MeanAcceptedLength() float64 { return 1 + s.AcceptedTokens/s.Drafts }

// PositionRates is each position's accepted share of the drafts.
func (s SpecDecode) PositionRates() []float64 {
	out := make([]float64, len(s.AcceptedPerPos))
	for i, n := range s.AcceptedPerPos {
		out[i] = n / s.Drafts
	}
	return out
}

// ConditionalRates are the per-position rates given every earlier
// position was accepted (the simulator's speculative_config
// acceptance_rate): position i's share over position i−1's (the drafts
// for position 0), 0 after a position nothing was accepted at. Drafts
// shorter than the rest (a sequence near its end) count as rejections
// at the positions they lack, so late positions read slightly low.
func (s SpecDecode) ConditionalRates() []float64 {
	out := make([]float64, len(s.AcceptedPerPos))
	prev := s.Drafts
	for i, n := range s.AcceptedPerPos {
		if prev > 0 {
			out[i] = min(max(n/prev, 0), 1)
		}
		prev = n
	}
	return out
}

// AddSpecDecode puts s's values into the aggregate (replacing any there);
// nothing when s saw no drafts.
func (p *Profile) AddSpecDecode(s SpecDecode) {
	if !s.Valid() {
		return
	}
	p.Metrics = slices.DeleteFunc(p.Metrics, func(m MetricResult) bool { return isSpecTag(m.Tag) })
	p.addScalar(TagSpecDrafts, s.Drafts)
	p.addScalar(TagSpecDraftTokens, s.DraftTokens)
	p.addScalar(TagSpecAcceptedTokens, s.AcceptedTokens)
	p.addScalar(TagSpecAcceptanceRate, s.AcceptanceRate())
	p.addScalar(TagSpecMeanAcceptedLength, s.MeanAcceptedLength())
	for i, r := range s.PositionRates() {
		p.addScalar(SpecPosTag(i), r)
	}
	p.sortMetrics()
}

// SpecDecode reads the aggregate's speculative decoding counters back (ok
// false when it has none): the per-position accepted tokens from their
// rates and the drafts.
func (p *Profile) SpecDecode() (SpecDecode, bool) {
	var s SpecDecode
	s.Drafts, _ = p.Value(TagSpecDrafts, "avg")
	s.DraftTokens, _ = p.Value(TagSpecDraftTokens, "avg")
	s.AcceptedTokens, _ = p.Value(TagSpecAcceptedTokens, "avg")
	if !s.Valid() {
		return SpecDecode{}, false
	}
	for i := 0; ; i++ {
		r, ok := p.Value(SpecPosTag(i), "avg")
		if !ok {
			break
		}
		s.AcceptedPerPos = append(s.AcceptedPerPos, r*s.Drafts)
	}
	return s, true
}

func isSpecTag(tag string) bool {
	switch tag {
	case TagSpecDrafts, TagSpecDraftTokens, TagSpecAcceptedTokens, TagSpecAcceptanceRate, TagSpecMeanAcceptedLength:
		return true
	}
	_, ok := SpecPosition(tag)
	return ok
}
