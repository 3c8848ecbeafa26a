package traces

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuildSession: each turn's prompt is its context turn's prompt plus
// that turn's output plus its new tokens; hash_ids extend the context
// turn's, and sibling branches share the blocks of their parent's answer.
func TestBuildSession(t *testing.T) {
	next := int64(100)
	reqs, err := BuildSession("s", []TurnSpec{
		{NewTokens: 20, OutputLength: 40},                              // 20 tokens: blocks 100, 101
		{Parents: []int{0}, NewTokens: 5, OutputLength: 4, DelayMs: 7}, // 20+40+5 = 65
		{Parents: []int{0}, NewTokens: 17, OutputLength: 2},            // 20+40+17 = 77
		{Parents: []int{1, 2}, NewTokens: 1, OutputLength: 1},          // continues turn 2 (79 > 69): 80
	}, 16, &next)
	require.NoError(t, err)
	var isl [4]int
	var ids [4][]int64
	for i, r := range reqs {
		isl[i], ids[i] = r.InputLength, r.HashIDs
		assert.True(t, hashIDsConsistent(r.InputLength, len(r.HashIDs), 16), "turn %d", i)
		assert.Equal(t, "s", r.SessionID)
		assert.Equal(t, i, r.Turn)
	}
	assert.Equal(t, [4]int{20, 65, 77, 80}, isl)
	assert.Equal(t, []int64{100, 101}, ids[0])
	assert.Equal(t, []int64{100, 101, 102, 103, 104}, ids[1], "turn 0's blocks, its answer's full block, fresh ones")
	assert.Equal(t, []int64{100, 101, 102, 105, 106}, ids[2], "the sibling shares the parent's answer block")
	assert.Equal(t, ids[2], ids[3], "the join continues turn 2's context: 79 tokens, the last block grows")
	assert.Equal(t, []int{1, 2}, reqs[3].Parents)
	assert.Equal(t, 7.0, reqs[1].DelayMs)
	assert.Equal(t, int64(107), next)

	_, err = BuildSession("s", []TurnSpec{{NewTokens: 1}, {Parents: []int{1}}}, 16, &next)
	require.ErrorContains(t, err, `session "s" turn 1`)
}
