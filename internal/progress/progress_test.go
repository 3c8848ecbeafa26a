package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBarPlainLines(t *testing.T) {
	var out bytes.Buffer
	b := New(&out, false)
	b.Update(4, 10, "4/10 done", false)
	b.Update(4, 10, "4/10 done, again", false) // no throttling off a terminal
	b.Update(10, 10, "10/10 done", true)
	b.Finish()
	assert.Equal(t, "progress: 4/10 done\nprogress: 4/10 done, again\nprogress: 10/10 done\n", out.String())
}

// fakeClock returns a clock that advances by step at every call.
func fakeClock(step time.Duration) func() time.Time {
	now := time.Unix(0, 0)
	return func() time.Time { now = now.Add(step); return now }
}

func TestBarOnTerminal(t *testing.T) {
	tests := []struct {
		name     string
		step     time.Duration // clock advance per reading
		contains []string
		absent   []string
	}{
		{
			name: "every update drawn",
			step: time.Second,
			contains: []string{
				"\r  50% [===============               ]  5/10 done",
				"\r  70% [=====================         ]  7/10 done",
				"\r 100% [==============================]  10/10 done",
			},
		},
		{
			name: "updates within 100 ms skipped, full and final ones drawn",
			step: time.Millisecond,
			contains: []string{
				"\r  50% [===============               ]  5/10 done",
				"\r 100% [==============================]  10/10 done",
			},
			absent: []string{"7/10 done"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			b := New(&out, true)
			b.now = fakeClock(tt.step)
			b.Update(5, 10, "5/10 done", false)
			b.Update(7, 10, "7/10 done", false)
			b.Update(10, 10, "10/10 done", true)
			s := out.String()
			for _, want := range tt.contains {
				assert.Contains(t, s, want)
			}
			for _, not := range tt.absent {
				assert.NotContains(t, s, not)
			}
			assert.True(t, strings.HasSuffix(s, "\n"), "the final update ends the bar's line: %q", s)
			assert.Equal(t, 1, strings.Count(s, "\n"))
			b.Finish()
			assert.Equal(t, 1, strings.Count(out.String(), "\n"), "Finish after a final update adds nothing")
		})
	}
}

func TestBarClamps(t *testing.T) {
	var out bytes.Buffer
	b := New(&out, true)
	b.Update(50, 3, "50/3 done", false) // a duration-limited run goes past its workload
	b.Update(1, 0, "1/0 done", false)
	b.Finish()
	s := out.String()
	assert.Contains(t, s, "[==============================]  50/3 done")
	assert.Contains(t, s, "1/0 done")
	assert.True(t, strings.HasSuffix(s, "\n"), "Finish ends an open bar line")
}

func TestFinishWithoutUpdate(t *testing.T) {
	var out bytes.Buffer
	New(&out, true).Finish()
	assert.Empty(t, out.String())
}

func TestIsTerminal(t *testing.T) {
	assert.False(t, IsTerminal(&bytes.Buffer{}))
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f), "a regular file is not a terminal")
}

func TestForTimeAndForCount(t *testing.T) {
	var b bytes.Buffer
	bar, every := ForTime(&b, 0)
	assert.NotNil(t, bar)
	assert.Equal(t, 10*time.Second, every, "not a terminal: a line every 10 s")
	_, every = ForTime(&b, time.Second)
	assert.Equal(t, time.Second, every)

	bar, n := ForCount(&b, false, false, 1000)
	assert.Nil(t, bar, "not a terminal and not forced: no progress")
	assert.Zero(t, n)
	bar, _ = ForCount(&b, true, true, 1000)
	assert.Nil(t, bar, "quiet wins")
	bar, n = ForCount(&b, false, true, 1000)
	assert.NotNil(t, bar)
	assert.Equal(t, 50, n, "plain lines every 5%")
	_, n = ForCount(&b, false, true, 3)
	assert.Equal(t, 1, n)
}
