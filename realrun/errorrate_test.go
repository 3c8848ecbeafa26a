package realrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseErrorRate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]float64{"": -1, "0.05": 0.05, "5%": 0.05, "0": 0, "100%": 1} {
		got, err := ParseErrorRate(in)
		require.NoError(t, err, in)
		assert.InDelta(t, want, got, 1e-12, in)
	}
	for _, bad := range []string{"x", "-1", "2", "NaN"} {
		_, err := ParseErrorRate(bad)
		assert.Error(t, err, bad)
	}
}
