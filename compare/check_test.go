package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

// TestCompareRefusesRunsWithNothingToCompare: `{}`, a run without a
// successful request, and a directory whose aggregate and records disagree
// (here the fixture's aggregate of 64 requests beside its 10 records,
// doubled) were compared, exit 0, with an empty table or without a word:
// the first two are errors now, the last a warning (the fixture's records
// are an excerpt of its run).
func TestCompareRefusesRunsWithNothingToCompare(t *testing.T) {
	t.Parallel()
	copyFixture := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "run")
		require.NoError(t, os.CopyFS(dir, os.DirFS(fixtureDir)))
		return dir
	}
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, dir string)
		want string
	}{
		{"an empty aggregate", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, results.RecordsName)))
			require.NoError(t, os.WriteFile(filepath.Join(dir, results.ProfileJSONName), []byte("{}"), 0o644))
		}, "neither a request count nor a latency: nothing to compare"},
		{"records without a success", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, results.ProfileJSONName)))
			path := filepath.Join(dir, results.RecordsName)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			failed := bytes.ReplaceAll(b, []byte(`"error": null`), []byte(`"error": {"code": 500, "type": "E", "message": "m"}`))
			require.NoError(t, os.WriteFile(path, failed, 0o644))
		}, "no successful request: nothing to compare"},
		{"aggregate and records disagree", func(t *testing.T, dir string) {
			path := filepath.Join(dir, results.RecordsName)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, append(b, b...), 0o644))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := copyFixture(t)
			tc.edit(t, dir)
			ref, err := Open(dir)
			require.NoError(t, err)
			cand, err := Open(fixtureDir)
			require.NoError(t, err)
			rep, err := Compare([]*Input{ref}, []*Input{cand}, Options{Stall: DefaultStallOptions})
			if tc.want == "" {
				require.NoError(t, err)
				assert.Contains(t, warningText(rep.Warnings), "run: the aggregate counts request_count 64 and error_request_count 0, its per-request records 20 and 0")
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), dir)
		})
	}
}

// TestCompareLatenciesWithoutACount: a result file that publishes latency
// statistics but not how many requests succeeded (a vllm benchmark whose
// totals were cut) is compared on its statistics, not refused as a run
// without a successful request.
func TestCompareLatenciesWithoutACount(t *testing.T) {
	t.Parallel()
	const counted, uncounted = "../peerruns/testdata/vllm-bench/vllm-0.11-e2el-c100.json", "../peerruns/testdata/vllm-bench/vllm-ascend-nightly-qps4.json"
	ref, err := Open(uncounted)
	require.NoError(t, err)
	_, ok := ref.Profile.Value(results.TagRequestCount, "avg")
	require.False(t, ok, "the file has no count")
	cand, err := Open(counted)
	require.NoError(t, err)
	rep, err := Compare([]*Input{ref}, []*Input{cand}, Options{Stall: DefaultStallOptions})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, rep))
	assert.Contains(t, b.String(), "Time to First Token (ms)")
	assert.Contains(t, warningText(rep.Warnings), "request_count is left out")
}
