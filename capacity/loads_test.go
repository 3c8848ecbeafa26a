package capacity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseConcurrencies(t *testing.T) {
	for in, want := range map[string][]int{
		"1,2,4,8":                {1, 2, 4, 8},
		"1..64x2":                {1, 2, 4, 8, 16, 32, 64},
		"1..50x2":                {1, 2, 4, 8, 16, 32},
		"1,2,3,4,5,6,8,16,32":    {1, 2, 3, 4, 5, 6, 8, 16, 32},
		"8, 1..8x2 ,12,16..64x4": {1, 2, 4, 8, 12, 16, 64},
		"1..10x1.5":              {1, 2, 3, 5, 8}, // 1, 1.5, 2.25, 3.375, 5.06, 7.59 rounded
		"5":                      {5},
	} {
		got, err := ParseConcurrencies(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestParseRates(t *testing.T) {
	for in, want := range map[string][]float64{
		"1,2,4":       {1, 2, 4},
		"0.5..8x2":    {0.5, 1, 2, 4, 8},
		"0.1..0.9x3":  {0.1, 0.3, 0.9},
		"2.5,1,0.25":  {0.25, 1, 2.5},
		"1..2x1.2,10": {1, 1.2, 1.44, 1.728, 10},
	} {
		got, err := ParseRates(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestParseLoadsErrors(t *testing.T) {
	for in, msg := range map[string]string{
		"":                  "empty item",
		"1,,2":              "empty item",
		"0":                 `"0" is not an integer >= 1`,
		"1.5":               `"1.5" is not an integer >= 1`,
		"-2":                `"-2" is not an integer >= 1`,
		"1..64":             "want START..ENDxFACTOR",
		"1..64x1":           `factor "1" must be a number > 1`,
		"1..64xabc":         `factor "abc" must be a number > 1`,
		"64..1x2":           "end 1 is below start 64",
		"1..1000000x1.0001": "more than 1000 loads",
	} {
		_, err := ParseConcurrencies(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
		assert.Contains(t, err.Error(), "concurrency list", in)
	}
	for in, msg := range map[string]string{
		"0":    `"0" is not a number > 0`,
		"NaN":  `"NaN" is not a number > 0`,
		"+Inf": `"+Inf" is not a number > 0`,
		"1..8": "want START..ENDxFACTOR",
	} {
		_, err := ParseRates(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}
