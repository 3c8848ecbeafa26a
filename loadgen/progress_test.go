package loadgen

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestProgressPrinter(t *testing.T) {
	t.Parallel()
	var plain bytes.Buffer
	pp := &ProgressPrinter{W: &plain}
	pp.Print(Progress{Elapsed: 2 * time.Second, Total: 10, Sent: 6, Done: 4, InFlight: 2, Errors: 1})
	assert.Equal(t, "progress: 4/10 done, 2 in flight, 1 errors, 2.0 req/s, elapsed 2.0s, ETA 3s\n", plain.String())

	var tty bytes.Buffer
	pp = &ProgressPrinter{W: &tty, TTY: true, Width: 10}
	pp.Print(Progress{Elapsed: time.Second, Total: 10, Done: 5})
	pp.Print(Progress{Elapsed: 2 * time.Second, Total: 10, Done: 10, Final: true})
	out := tty.String()
	assert.True(t, strings.HasPrefix(out, "\r[=====     ] 5/10 done"), out)
	assert.Contains(t, out, "\r[==========] 10/10 done")
	assert.True(t, strings.HasSuffix(out, "\n"), "the final bar ends its line")

	assert.Contains(t, progressLine(Progress{Elapsed: 10 * time.Second, Duration: 30 * time.Second, Total: 3, Done: 50}), "ETA 20s")
}
