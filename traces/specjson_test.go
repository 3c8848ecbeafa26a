package traces

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecJSONBuildsTheSameWorkload: a spec recorded with Spec.JSON
// builds the same workload again (the digest a run records), transforms
// included; an unknown key is refused.
func TestSpecJSONBuildsTheSameWorkload(t *testing.T) {
	trace, limit, speedup, maxOSL := "../testdata/traces/conversation_slice.jsonl", 12, 2.0, 30
	spec := Spec{Trace: &trace, Limit: &limit, Speedup: &speedup, MaxOSL: &maxOSL}
	want, _, err := spec.Build(0)
	require.NoError(t, err)
	b, err := spec.JSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"trace": "`+trace+`", "limit": 12, "speedup": 2, "max_osl": 30}`, string(b))
	got, err := BuildJSON(b, 0)
	require.NoError(t, err)
	assert.Equal(t, want.Digest, got.Digest)
	assert.Len(t, got.Requests, 12)

	_, err = BuildJSON([]byte(`{"trace": "x", "limitt": 3}`), 0)
	assert.ErrorContains(t, err, `workload spec: json: unknown field "limitt"`)
}
