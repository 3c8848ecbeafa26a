package loadgen

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With a StartAt the schedule's time zero is that wall instant: every
// intended send time is StartAt plus the trace timestamp, to the ns.
func TestRunStartAtIsTheTimeOrigin(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(&openaitest.Server{ITL: time.Millisecond})
	defer ts.Close()
	for _, tc := range []struct {
		name string
		from time.Duration // StartAt relative to now
		late bool
	}{
		{"future", 30 * time.Millisecond, false},
		{"past", -200 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := time.Now().Add(tc.from).Round(0) // a wall-clock instant, as parsed from RFC 3339
			wl := everyMs(4, 5, 2)
			var sink collect
			rep, err := Run(context.Background(), wl, Config{Endpoint: chatEndpoint(ts.URL), StartAt: at}, sink.add)
			require.NoError(t, err)
			require.Len(t, sink.recs, 4)
			for _, r := range sink.recs {
				want := at.UnixNano() + int64(wl.Requests[r.TraceRow].TimestampMs*1e6)
				assert.Equal(t, want, r.IntendedNs, "row %d", r.TraceRow)
				assert.GreaterOrEqual(t, r.StartNs, want)
			}
			if tc.late {
				assert.GreaterOrEqual(t, rep.StartLate, 200*time.Millisecond)
				assert.Contains(t, warning.Messages(rep.Warnings())[0], "after --start-at")
			} else {
				assert.Zero(t, rep.StartLate)
				assert.GreaterOrEqual(t, rep.StartNs, at.UnixNano())
			}
		})
	}
}

func TestRunStartAtCancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var sink collect
	rep, err := Run(ctx, everyMs(2, 5, 2), Config{Endpoint: chatEndpoint("http://127.0.0.1:1"),
		StartAt: time.Now().Add(time.Hour)}, sink.add)
	require.NoError(t, err)
	assert.True(t, rep.Interrupted)
	assert.Empty(t, sink.recs)
}
