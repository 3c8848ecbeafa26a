package calibrate

import (
	"slices"

	"github.com/simbench/simbench/results"
)

// minTemplateShare is the share of the records whose prompt count must
// exceed the workload's ISL by the same number of tokens for that number
// to be the chat template's: a server's count of one template is exact,
// a client's approximate count scatters.
const minTemplateShare = 0.8

// templateTokens is what the server's chat template added to every
// prompt: usage.prompt_tokens − the workload's ISL, when most records of
// the targets agree on it, else 0 (the ISL was counted by the client, or
// the prompts were not synthesised from the workload). n is how many
// records it was measured on.
func templateTokens(targets []Target) (tokens, n int) {
	var diffs []int
	for _, t := range targets {
		isl := map[int]int{}
		for _, q := range t.Workload.Requests {
			isl[q.Row] = q.InputLength
		}
		for i := range t.Records {
			m := &t.Records[i]
			got, ok := m.Get(results.TagISL)
			want, known := 0, false
			if m.Ext != nil {
				want, known = isl[m.Ext.TraceRow]
			}
			if m.Error == nil && ok && known && want > 0 {
				diffs = append(diffs, int(got)-want)
			}
		}
	}
	if len(diffs) == 0 {
		return 0, 0
	}
	slices.Sort(diffs)
	med := diffs[len(diffs)/2]
	same := 0
	for _, d := range diffs {
		if d == med {
			same++
		}
	}
	if med <= 0 || float64(same) < minTemplateShare*float64(len(diffs)) {
		return 0, len(diffs)
	}
	return med, len(diffs)
}
