package loadgen

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestProgressString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Progress
		want string
	}{
		{"ETA from the rate", Progress{Elapsed: 2 * time.Second, Total: 10, Sent: 6, Done: 4, InFlight: 2, Errors: 1},
			"4/10 done, 2 in flight, 1 errors, 2.0 req/s, elapsed 2.0s, ETA 3s"},
		{"ETA from the duration limit", Progress{Elapsed: 10 * time.Second, Duration: 30 * time.Second, Total: 3, Done: 50},
			"50/3 done, 0 in flight, 0 errors, 5.0 req/s, elapsed 10.0s, ETA 20s"},
		{"all done", Progress{Elapsed: 2 * time.Second, Total: 10, Done: 10, Final: true},
			"10/10 done, 0 in flight, 0 errors, 5.0 req/s, elapsed 2.0s, ETA 0s"},
		{"nothing done yet", Progress{Total: 10},
			"0/10 done, 0 in flight, 0 errors, 0.0 req/s, elapsed 0.0s, ETA ?"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.p.String(), tt.name)
	}
}
