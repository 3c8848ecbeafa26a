package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConverter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to string
		in, want float64
	}{
		{"ms", "ms", 12.5, 12.5},
		{"ms", "sec", 1500, 1.5},
		{"sec", "ms", 2, 2000},
		{"s", "sec", 3, 3},
		{"ns", "ms", 2e6, 2},
		{"us", "ms", 1500, 1.5},
		{"tokens/sec", "tok/s", 10, 10},
		{"tokens/ms", "tokens/sec", 2, 2000},
		{"requests/s", "requests/sec", 4, 4},
		{"tokens/sec/user", "tokens/s/user", 7, 7},
		{"tokens", "token", 5, 5},
		{"%", "%", 3, 3},
	}
	for _, tc := range tests {
		t.Run(tc.from+"→"+tc.to, func(t *testing.T) {
			conv, err := converter(tc.from, tc.to)
			require.NoError(t, err)
			assert.InDelta(t, tc.want, conv(tc.in), 1e-9*tc.want)
		})
	}
}

func TestConverterRefusesDifferentDimensions(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"ms", "tokens"}, {"tokens/sec", "tokens/sec/user"},
		{"requests/sec", "tokens/sec"}, {"ms", "tokens/sec"}, {"%", "ms"}, {"furlongs", "ms"}} {
		_, err := converter(pair[0], pair[1])
		assert.Error(t, err, "%s → %s", pair[0], pair[1])
	}
}
