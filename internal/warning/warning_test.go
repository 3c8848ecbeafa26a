package warning

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrint(t *testing.T) {
	tests := []struct {
		name string
		in   []error
		want string
	}{
		{"none", nil, ""},
		{"one", []error{errors.New("a lock taken over")}, "warning: a lock taken over\n"},
		{"two", []error{errors.New("x"), errors.New("y")}, "warning: x\nwarning: y\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			Print(&b, tt.in)
			assert.Equal(t, tt.want, b.String())
		})
	}
	assert.NotPanics(t, func() { Print(nil, []error{errors.New("dropped")}) })
}

func TestTo(t *testing.T) {
	var b bytes.Buffer
	To(&b)([]error{errors.New("late")})
	assert.Equal(t, "warning: late\n", b.String())
}
