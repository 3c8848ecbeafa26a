package tokenizer_test

import (
	"testing"

	"github.com/simbench/simbench/tokenizer"
	"github.com/stretchr/testify/assert"
)

func TestApprox(t *testing.T) {
	t.Parallel()
	check := func(in string, want int) {
		t.Helper()
		assert.Equal(t, want, tokenizer.Approx([]byte(in)), "%q", in)
	}
	check("", 0)
	check(" the", 1)
	check("\n", 1)
	check("   ", 1)
	check(" understanding", 2)
	check("Hello, world!", 4)
	check("2024", 2)
	check(" tok", 1)
	check("naïve café", 2)
	check("a_b", 1)
}
