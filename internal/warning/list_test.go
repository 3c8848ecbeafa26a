package warning

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type strWarning string

func (s strWarning) Error() string { return string(s) }

func TestOf(t *testing.T) {
	assert.Nil(t, Of[strWarning](nil))
	assert.Equal(t, []error{strWarning("a"), strWarning("b")}, Of([]strWarning{"a", "b"}))
}

func TestListJSON(t *testing.T) {
	tests := []struct {
		name string
		in   List
		want string
	}{
		{"nil", nil, "null"},
		{"empty", List{}, "[]"},
		{"two", List{errors.New("x"), errors.New(`a "quoted" one`)}, `["x","a \"quoted\" one"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
			var back List
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, Messages(tt.in), Messages(back))
			assert.Equal(t, tt.in == nil, back == nil)
		})
	}
	var l List
	assert.Error(t, json.Unmarshal([]byte(`[1]`), &l))
}

func TestListOmitEmpty(t *testing.T) {
	b, err := json.Marshal(struct {
		W List `json:"w,omitempty"`
	}{})
	require.NoError(t, err)
	assert.Equal(t, "{}", string(b))
}

func TestUnique(t *testing.T) {
	in := []error{errors.New("a"), errors.New("b"), errors.New("a")}
	assert.Equal(t, []string{"a", "b"}, Messages(Unique(in)))
	assert.Nil(t, Unique(nil))
}
