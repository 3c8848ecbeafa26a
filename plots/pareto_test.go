package plots

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParetoDeterministicPNG(t *testing.T) {
	panel := ParetoPanel{Title: "t", XLabel: "x", YLabel: "y",
		Points: []ParetoPoint{{X: 3, Y: 1}, {X: 1, Y: 2, Front: true}, {X: 2, Y: 3, Front: true}}}
	render := func() []byte {
		f, err := Pareto(panel, panel)
		require.NoError(t, err)
		var b bytes.Buffer
		w, h := Size(f)
		require.NoError(t, WritePNG(&b, f, w, h))
		return b.Bytes()
	}
	a := render()
	assert.NotEmpty(t, a)
	assert.Equal(t, a, render())
	_, err := Pareto(ParetoPanel{Title: "empty"})
	assert.ErrorIs(t, err, ErrNoData)
	_, err = Pareto()
	assert.ErrorIs(t, err, ErrNoData)
}
