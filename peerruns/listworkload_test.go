package peerruns

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/internal/warning"
)

// TestListWorkload rebuilds the requests of per-request lists under each
// way a benchmark sends them; a failed request, or one without content, is
// left out.
func TestListWorkload(t *testing.T) {
	lists := func(starts []float64) *requestLists {
		return &requestLists{InputLens: []float64{1000, 600, 513}, OutputLens: []float64{10, 0, 7},
			TTFTs: []float64{0.05, 0, 0.04}, ITLs: [][]float64{{0.01}, {}, {0.02}}, Errors: []string{"", "", ""}, StartTimes: starts}
	}
	for _, tc := range []struct {
		name       string
		top        string
		starts     []float64
		times      []float64 // ms; nil: no timestamps
		conc       int
		noWorkload string
		note       string
	}{
		{name: "start times under a cap", top: `{"request_rate": "inf", "max_concurrency": 4}`, starts: []float64{100.5, 100.7, 101.0},
			times: []float64{0, 500}, conc: 4, note: "at its recorded start time, at most 4 in flight"},
		{name: "infinite rate, a cap", top: `{"request_rate": "inf", "max_concurrency": 2}`,
			conc: 2, note: "a closed loop of 2"},
		{name: "infinite rate, no cap", top: `{"request_rate": Infinity}`,
			times: []float64{0, 0}, note: "all at once"},
		{name: "a rate without send times", top: `{"request_rate": 4, "max_concurrency": 8}`,
			noWorkload: "do not record when each request was sent, and the rate (4 requests/s) does not fix it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var top map[string]json.RawMessage
			b, err := replaceBareNumbers([]byte(tc.top), func(string, int) bool { return true })
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &top))
			r := &Run{Name: "x"}
			r.listWorkload("the tool's", "f.json", lists(tc.starts), readBenchLoad(top))
			if tc.noWorkload != "" {
				assert.Nil(t, r.Workload)
				assert.Contains(t, r.NoWorkload, tc.noWorkload)
				return
			}
			require.NotNil(t, r.Workload, r.NoWorkload)
			wl := r.Workload
			require.Len(t, wl.Requests, 2, "the request without content is left out")
			assert.Equal(t, []int{1000, 513}, []int{wl.Requests[0].InputLength, wl.Requests[1].InputLength})
			assert.Equal(t, []int{10, 7}, []int{wl.Requests[0].OutputLength, wl.Requests[1].OutputLength})
			assert.Len(t, wl.Requests[0].HashIDs, 2)
			assert.Len(t, wl.Requests[1].HashIDs, 2)
			assert.NotEqual(t, wl.Requests[0].HashIDs[0], wl.Requests[1].HashIDs[0], "prompts are unique")
			assert.Equal(t, tc.conc, wl.Concurrency)
			for i, req := range wl.Requests {
				if tc.times == nil {
					assert.False(t, req.HasTimestamp)
					continue
				}
				require.True(t, req.HasTimestamp)
				assert.InDelta(t, tc.times[i], req.TimestampMs, 1e-9)
			}
			notes := strings.Join(warning.Messages(r.WorkloadNotes), "\n")
			assert.Contains(t, notes, tc.note)
			assert.Contains(t, notes, "1 failed request(s) are left out")
		})
	}
}
