package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

func TestRunRejectsWorkload(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wl   *traces.Workload
		want string
	}{
		{"empty", &traces.Workload{}, "sim: empty workload"},
		{"closed loop without concurrency", workload(traces.Request{InputLength: 10, OutputLength: 1}),
			"sim: requests without timestamps need a concurrency > 0 (closed loop)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Run(context.Background(), constCfg("vllm", 10, 0), tt.wl, nil)
			require.EqualError(t, err, tt.want)
		})
	}
}
