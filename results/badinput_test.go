package results

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Inputs that were accepted silently (issue 14): each is refused with the
// file, line and field, or recovered with a warning.

func TestProfileJSONRefusesNonNumberStatistic(t *testing.T) {
	b, err := os.ReadFile(fixtureJSON)
	require.NoError(t, err)
	for _, bad := range []string{`"12.5"`, `{"x":1}`, `true`, `1e999`} {
		edited := bytes.Replace(b, []byte(`"time_to_first_token": {
    "unit": "ms",
    "avg": `), []byte(`"time_to_first_token": {
    "unit": "ms",
    "avg": `+bad+`, "was": `), 1)
		require.NotEqual(t, b, edited, "the fixture's layout changed")
		_, err := ReadProfileJSON(bytes.NewReader(edited))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), `"time_to_first_token"`)
		assert.Contains(t, err.Error(), "avg: want a finite number, got "+bad)
	}
}

func TestSummarizeEmptyJSONLIsNoRecords(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.jsonl": "", "blank.jsonl": "\n  \n"} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		_, err := SummarizeJSONL(path, nil)
		require.ErrorIs(t, err, ErrNoRecords)
		assert.Contains(t, err.Error(), path)
		_, _, err = RecoverJSONL(path, nil)
		require.ErrorIs(t, err, ErrNoRecords)
	}
}

func TestJSONLRecordWithoutMetricsIsAnError(t *testing.T) {
	lines := fixtureLines(t)
	lines[3] = `{"metadata": {"session_num": 3, "request_start_ns": 1, "request_end_ns": 2}, "error": null}`
	_, err := ReadJSONL(strings.NewReader(strings.Join(lines, "\n")), "x.jsonl")
	var le *LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 4, le.Line)
	assert.Equal(t, "metrics", le.Field)
	assert.EqualError(t, err, `x.jsonl:4: field "metrics": missing`)
}

func TestRecoverJSONLDropsATornLastLine(t *testing.T) {
	b, err := os.ReadFile(fixtureJSONL)
	require.NoError(t, err)
	whole := bytes.TrimRight(b, "\n")
	cut := bytes.LastIndexByte(whole, '\n')
	torn := append(append([]byte(nil), whole[:cut+1]...), whole[cut+1:cut+200]...) // no newline
	path := filepath.Join(t.TempDir(), RecordsName)
	require.NoError(t, os.WriteFile(path, torn, 0o644))

	_, err = SummarizeJSONL(path, nil)
	require.Error(t, err, "the strict reader still refuses it")

	p, warnings, err := RecoverJSONL(path, nil)
	require.NoError(t, err)
	n, _ := p.Value(TagRequestCount, "avg")
	assert.Equal(t, 9.0, n, "the nine whole lines are kept")
	require.Len(t, warnings, 1)
	assert.ErrorContains(t, warnings[0], path+":10: the last line is torn")

	// A bad line that has its newline is corruption, not a torn write.
	require.NoError(t, os.WriteFile(path, append(torn, '\n'), 0o644))
	_, _, err = RecoverJSONL(path, nil)
	require.Error(t, err)
}

// fullDisk is a file that accepts limit bytes, then fails a write after
// writing part of it, as a full disk does; it truncates as *os.File does.
type fullDisk struct {
	data  []byte
	pos   int64
	limit int
}

func (f *fullDisk) Write(p []byte) (int, error) {
	room := f.limit - int(f.pos)
	n := min(max(room, 0), len(p))
	f.data = append(f.data[:f.pos], p[:n]...)
	f.pos += int64(n)
	if n < len(p) {
		return n, errors.New("no space left on device")
	}
	return n, nil
}

func (f *fullDisk) Truncate(size int64) error {
	f.data = f.data[:size]
	return nil
}

func (f *fullDisk) Seek(off int64, whence int) (int64, error) {
	f.pos = off
	return off, nil
}

func TestJSONLWriterCutsATornLineOnWriteError(t *testing.T) {
	recs := genRecords(20, 8)
	disk := &fullDisk{limit: 9000}
	jw := NewJSONLWriter(disk)
	var err error
	written := 0
	for i := range recs {
		m := ComputeMetrics(&recs[i])
		if err = jw.Write(&m); err != nil {
			break
		}
		written++
	}
	require.Error(t, err, "the disk filled up")
	assert.Contains(t, err.Error(), "no space left on device")
	require.Positive(t, written)
	assert.Equal(t, byte('\n'), disk.data[len(disk.data)-1], "the file ends with a whole line")
	got, err := ReadJSONL(bytes.NewReader(disk.data), "disk")
	require.NoError(t, err)
	assert.Len(t, got, written)
	assert.Equal(t, int64(len(disk.data)), disk.pos, "the next write appends after the last whole line")
}

func TestErrorSummaryGroupsOneFailureDespiteItsFigures(t *testing.T) {
	agg := NewAggregator(nil)
	add := func(code int, typ, msg string) {
		agg.Add(&RecordMetrics{Error: &ErrorDetails{Code: code, Type: typ, Message: msg}})
	}
	add(0, "TimeoutError", "request timed out after 0.502 seconds")
	add(0, "TimeoutError", "request timed out after 0.500 seconds")
	add(0, "TimeoutError", "request timed out after 10.5 seconds")
	add(499, "RequestCancellationError", "Request was cancelled after 1.250 seconds")
	add(499, "RequestCancellationError", "Request was cancelled after 0.003 seconds")
	add(400, "Bad Request", "model not found")
	add(400, "Bad Request", "prompt too long")
	got := agg.Profile().ErrorSummary
	assert.Equal(t, []ErrorCount{
		{Details: ErrorDetails{Type: "TimeoutError", Message: "request timed out after 0.502 seconds"}, Count: 3},
		{Details: ErrorDetails{Code: 499, Type: "RequestCancellationError", Message: "Request was cancelled after 1.250 seconds"}, Count: 2},
		{Details: ErrorDetails{Code: 400, Type: "Bad Request", Message: "model not found"}, Count: 1},
		{Details: ErrorDetails{Code: 400, Type: "Bad Request", Message: "prompt too long"}, Count: 1},
	}, got)
}

// TestJSONLRefusesImpossibleRecords: a successful record without metrics,
// TTFT −50 ms, a time in seconds (read as ms), OSL 1e300 and a request that
// ended before it started were accepted; each is refused with the line and
// the field.
func TestJSONLRefusesImpossibleRecords(t *testing.T) {
	const meta = `"metadata":{"session_num":0,"request_start_ns":1000000000,"request_end_ns":1100000000,"benchmark_phase":"profiling"}`
	ok := `{` + meta + `,"metrics":{"request_latency":{"value":100,"unit":"ms"},"time_to_first_token":{"value":20,"unit":"ms"},"output_sequence_length":{"value":5,"unit":"tokens"}}}`
	for _, tc := range []struct{ name, line, field, want string }{
		{"no metrics", `{` + meta + `,"metrics":{}}`, "metrics", "a request without an error has no request_latency"},
		{"negative TTFT", strings.Replace(ok, `"value":20`, `"value":-50`, 1), "metrics.time_to_first_token", "negative value -50"},
		{"seconds", strings.Replace(ok, `"value":20,"unit":"ms"`, `"value":0.02,"unit":"s"`, 1), "metrics.time_to_first_token", `unit "s": want "ms"`},
		{"huge OSL", strings.Replace(ok, `"value":5,`, `"value":1e300,`, 1), "metrics.output_sequence_length", "value 1e+300 tokens is beyond"},
		{"ends before it starts", strings.Replace(ok, `"request_end_ns":1100000000`, `"request_end_ns":900000000`, 1),
			"metadata.request_end_ns", "900000000 is before request_start_ns 1000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJSONL(strings.NewReader(ok+"\n"+tc.line+"\n"), "r.jsonl")
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, 2, le.Line)
			assert.Equal(t, tc.field, le.Field)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	recs, err := ReadJSONL(strings.NewReader(ok+"\n"), "r.jsonl")
	require.NoError(t, err)
	assert.Len(t, recs, 1)
}
