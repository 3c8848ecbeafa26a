package results

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCompletionRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		ends []int64
		want float64
		ok   bool
	}{
		{"one every 100 ms, out of order", []int64{3e8, 1e8, 2e8, 4e8}, 10, true},
		{"one every 2 s", []int64{0, 2e9, 4e9}, 0.5, true},
		{"one completion", []int64{5}, 0, false},
		{"none apart", []int64{7, 7}, 0, false},
		{"none", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := CompletionRate(tc.ends)
			assert.Equal(t, tc.ok, ok)
			assert.InDelta(t, tc.want, got, 1e-9)
		})
	}
}
