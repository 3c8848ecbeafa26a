package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProgressString(t *testing.T) {
	assert.Equal(t, "40/40 requests, 12.3 s simulated", Progress{SimNs: 12_345_000_000, Done: 40, Total: 40}.String())
	assert.Equal(t, "0/7 requests, 0.0 s simulated", Progress{Total: 7}.String())
}
