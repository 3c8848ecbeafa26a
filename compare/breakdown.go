package compare

import (
	"fmt"
	"math"

	"github.com/simbench/simbench/servermetrics"
)

// gapTolerance is how small the TTFT gap (candidate − reference TTFT mean)
// may be, relative to the reference's TTFT mean, before it counts as nil:
// below it, shares of the gap would only amplify rounding.
const gapTolerance = 1e-3

// BreakdownComparison lines up the server-side TTFT breakdowns of both runs
// stage by stage: where the time to first token went on each side, and
// which stages explain the gap between them.
type BreakdownComparison struct {
	Reference, Candidate *servermetrics.TTFTBreakdown
	// SameSource is false when the runs share no breakdown source (say
	// Dynamo's stages against vLLM's): their stage names may not line up.
	SameSource bool
	// Stages are the union of both runs' stages: the reference's in its
	// order, then the candidate's others.
	Stages []BreakdownRow
	// Total compares the stage means added up; TTFT the TTFT means.
	Total, TTFT BreakdownRow
}

// BreakdownRow is one stage (or a total) of both runs, in ms.
type BreakdownRow struct {
	Stage, Phase string // as the server labels them; Phase may be ""
	// Reference and Candidate are the stage means, nil for a run without
	// the stage.
	Reference, Candidate *float64
	// DiffMs is Candidate − Reference, a missing stage counting as 0 ms, so
	// that the stage diffs add up to the total's.
	DiffMs float64
	// ErrorPct is (Candidate − Reference)/Reference × 100, as for every
	// statistic (see Row); nil when either run lacks the stage or the
	// reference is 0.
	ErrorPct *float64
	// GapSharePct is DiffMs as a share of the TTFT gap (candidate TTFT mean
	// − reference TTFT mean), × 100; nil when the gap is within
	// gapTolerance of nothing.
	GapSharePct *float64
}

// BreakdownStageName names a stage as "stage/phase", or "stage" without a
// phase (servermetrics.BreakdownStage.Key).
func BreakdownStageName(stage, phase string) string {
	return servermetrics.BreakdownStage{Stage: stage, Phase: phase}.Key()
}

// CompareBreakdowns lines up two breakdowns.
func CompareBreakdowns(ref, cand *servermetrics.TTFTBreakdown, sameSource bool) *BreakdownComparison {
	bc := &BreakdownComparison{Reference: ref, Candidate: cand, SameSource: sameSource}
	gap := cand.TTFTMeanMs - ref.TTFTMeanMs
	if math.Abs(gap) <= gapTolerance*math.Abs(ref.TTFTMeanMs) || !finite(gap) {
		gap = 0
	}
	refMeans, candMeans := stageMeans(ref), stageMeans(cand)
	for _, st := range unionStages(ref.Stages, cand.Stages) {
		k := st.Key()
		bc.Stages = append(bc.Stages, breakdownRow(st.Stage, st.Phase, refMeans[k], candMeans[k], gap))
	}
	bc.Total = breakdownRow("stages total", "", ptr(ref.StageSumMs), ptr(cand.StageSumMs), gap)
	bc.TTFT = breakdownRow("TTFT", "", ptr(ref.TTFTMeanMs), ptr(cand.TTFTMeanMs), gap)
	return bc
}

func breakdownRow(stage, phase string, ref, cand *float64, gap float64) BreakdownRow {
	r := BreakdownRow{Stage: stage, Phase: phase, Reference: ref, Candidate: cand,
		DiffMs: valueOr0(cand) - valueOr0(ref)}
	if ref != nil && cand != nil {
		r.ErrorPct = errorPct(*ref, *cand)
	}
	if gap != 0 {
		share := r.DiffMs / gap * 100
		r.GapSharePct = &share
	}
	return r
}

// stageMeans indexes a breakdown's finite stage means by stage key.
func stageMeans(b *servermetrics.TTFTBreakdown) map[string]*float64 {
	out := map[string]*float64{}
	for _, st := range b.Stages {
		if finite(st.MeanMs) {
			out[st.Key()] = ptr(st.MeanMs)
		}
	}
	return out
}

// unionStages lists a's stages, then b's that a lacks.
func unionStages(a, b []servermetrics.BreakdownStage) []servermetrics.BreakdownStage {
	seen := map[string]bool{}
	var out []servermetrics.BreakdownStage
	for _, st := range append(append([]servermetrics.BreakdownStage(nil), a...), b...) {
		if !seen[st.Key()] {
			seen[st.Key()] = true
			out = append(out, st)
		}
	}
	return out
}

func ptr(v float64) *float64 {
	if !finite(v) {
		return nil
	}
	return &v
}

func valueOr0(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// pickBreakdowns chooses the first source (in the reference's order, best
// first) both runs have, else each run's best.
func pickBreakdowns(ref, cand []*servermetrics.TTFTBreakdown) (r, c *servermetrics.TTFTBreakdown, same bool) {
	for _, a := range ref {
		for _, b := range cand {
			if a.Server == b.Server {
				return a, b, true
			}
		}
	}
	return ref[0], cand[0], false
}

// addBreakdown compares the runs' breakdowns when both have one, with
// warnings for a run without one (when the other has one), different
// sources and stages that do not add up to TTFT.
func (r *Report) addBreakdown(refBs, candBs []*servermetrics.TTFTBreakdown) {
	switch {
	case len(refBs) == 0 && len(candBs) == 0:
		return
	case len(refBs) == 0 || len(candBs) == 0:
		has, lacks := r.Candidate(), r.Reference()
		if len(refBs) > 0 {
			has, lacks = r.Reference(), r.Candidate()
		}
		r.Warnings = append(r.Warnings, warnf("TTFT breakdown not compared: %s has server-side TTFT stages, %s none (no %s or %s beside it)",
			has.Name, lacks.Name, servermetrics.JSONName, servermetrics.TTFTBreakdownName))
		return
	}
	a, b, same := pickBreakdowns(refBs, candBs)
	r.TTFTBreakdown = CompareBreakdowns(a, b, same)
	if !same {
		r.Warnings = append(r.Warnings, warnf("TTFT breakdown: different sources, %s's from %s and %s's from %s: stage names may not line up",
			r.Reference().Name, a.Server, r.Candidate().Name, b.Server))
	}
	for _, side := range []struct {
		name string
		b    *servermetrics.TTFTBreakdown
	}{{r.Reference().Name, a}, {r.Candidate().Name, b}} {
		if !side.b.Additive {
			r.Warnings = append(r.Warnings, warnf("TTFT breakdown of %s is not additive: %s", side.name, side.b.Reason))
		}
	}
}

// breakdownSource describes where a side's breakdown comes from.
func breakdownSource(b *servermetrics.TTFTBreakdown) string {
	return fmt.Sprintf("%s, %s requests", b.Server, fmtValue("count", b.TTFTCount))
}

// additivityNote says whether a side's stage means add up to its TTFT mean.
func additivityNote(b *servermetrics.TTFTBreakdown) string {
	if b.Additive {
		return fmt.Sprintf("additive (stage means add up to the TTFT mean within %g%%)", 100*servermetrics.AdditivityTolerance)
	}
	return "not additive: " + b.Reason
}

// breakdownTable is the section's table, for text and markdown.
func breakdownTable(b *BreakdownComparison) [][]string {
	t := [][]string{{"Stage", "Phase", "Reference ms", "Candidate ms", "Diff ms", "Error", "Share of TTFT gap"}}
	for _, row := range append(append([]BreakdownRow(nil), b.Stages...), b.Total, b.TTFT) {
		t = append(t, []string{row.Stage, row.Phase, optMs(row.Reference), optMs(row.Candidate),
			fmtSigned(row.DiffMs), fmtPct(row.ErrorPct), fmtPct(row.GapSharePct)})
	}
	return t
}

func optMs(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmtNum(*p)
}
