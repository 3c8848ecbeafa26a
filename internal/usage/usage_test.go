package usage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUsageErrors(t *testing.T) {
	err := fmt.Errorf("validate: %w", Errorf("--limit must be >= 1, got %d", 0))
	assert.True(t, Is(err), "found through wrapping")
	assert.Equal(t, "validate: --limit must be >= 1, got 0", err.Error(), "the message is the wrapped one")
	assert.False(t, Is(errors.New("connection refused")))
	assert.NoError(t, Wrap(nil))
	base := errors.New("bad")
	assert.ErrorIs(t, Wrap(base), base)
}
