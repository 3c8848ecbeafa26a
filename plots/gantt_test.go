package plots

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agent is a planner, two overlapping branches, a join after a tool wait.
var agent = []GanttTurn{{0, 0, 1}, {1, 1.5, 3}, {2, 2, 2.5}, {3, 4, 5}}

func TestGanttLanesAndIdle(t *testing.T) {
	assert.Equal(t, [][]int{{0, 1, 3}, {2}}, assignLanes(agent), "the second branch gets a lane of its own")
	assert.Equal(t, [][2]float64{{1, 1.5}, {3, 4}}, idle(agent))
	assert.Empty(t, idle([]GanttTurn{{0, 0, 5}, {1, 1, 2}, {2, 5, 6}}), "a request inside another, then one at its end")
}

func TestGanttDraws(t *testing.T) {
	_, err := Gantt("g", GanttRun{Name: "empty"})
	require.ErrorIs(t, err, ErrNoData)
	fig, err := Gantt("g", GanttRun{Name: "real", Sessions: []GanttSession{{Name: "a", Turns: agent}}},
		GanttRun{Name: "sim", Sessions: []GanttSession{{Name: "a", Turns: agent[:2]}, {Name: "b", Turns: agent[1:3]}}})
	require.NoError(t, err)
	require.Len(t, fig.Plots, 2)
	assert.Equal(t, fig.Plots[0].X.Max, fig.Plots[1].X.Max, "one time axis")
	var buf bytes.Buffer
	w, h := Size(fig)
	require.NoError(t, WritePNG(&buf, fig, w, h))
	img, err := png.Decode(&buf)
	require.NoError(t, err)
	assert.Equal(t, 800, img.Bounds().Dx())
}
