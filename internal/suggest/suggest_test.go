package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNearest(t *testing.T) {
	tests := []struct {
		s     string
		names []string
		want  string
		dist  int
	}{
		{"comapre", []string{"compare", "calibrate", "sim"}, "compare", 2},
		{"sim", []string{"summarize", "sim", "run"}, "sim", 0},
		{"x", []string{"ab", "cd"}, "ab", 2}, // the first of equals
		{"x", nil, "", -1},
	}
	for _, tt := range tests {
		got, d := Nearest(tt.s, tt.names)
		assert.Equal(t, tt.want, got, tt.s)
		assert.Equal(t, tt.dist, d, tt.s)
	}
}

func TestClose(t *testing.T) {
	cmds := []string{"summarize", "calibrate", "trace", "compare", "plot", "sim", "run", "merge", "validate", "fidelity"}
	tests := []struct{ s, want string }{
		{"comapre", "compare"},
		{"runn", "run"},
		{"valdiate", "validate"},
		{"nosuch", ""},
		{"x", ""},
		{"max-eror-rate", "max-error-rate"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Close(tt.s, append(cmds, "max-error-rate")), tt.s)
	}
}
