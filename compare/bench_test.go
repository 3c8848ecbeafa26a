package compare

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
)

// benchRecords is the size of each run in BenchmarkCompareMillion.
const benchRecords = 1_000_000

// writeBenchRun writes n synthetic records of 20 one-token chunks; with
// stalls, every 1000th request gets one 200 ms gap and TTFT grows 2 ms.
func writeBenchRun(b testing.TB, path string, n int, stalls bool) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	jw := results.NewJSONLWriter(bw)
	for i := 0; i < n; i++ {
		r := synthRecord(i, 20)
		if stalls {
			shiftRecord(r, i)
		}
		m := results.ComputeMetrics(r)
		if err := jw.Write(&m); err != nil {
			b.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

func shiftRecord(r *results.Record, i int) {
	for c := range r.Chunks {
		r.Chunks[c].AtNs += 2_000_000
		if i%1000 == 0 && c >= 10 {
			r.Chunks[c].AtNs += 200_000_000
		}
	}
	r.EndNs = r.Chunks[len(r.Chunks)-1].AtNs
}

// BenchmarkCompareMillion compares two 1 M-request profile_export.jsonl
// files (aggregates computed in the same pass), under the same soft memory
// limit as `simbench compare` (1.5 GiB). Off by default, as every
// benchmark: go test -run '^$' -bench CompareMillion -benchtime 1x ./compare/
// It reports the time of a bare results.JSONLReader pass over both files
// too, to show how much of the total is JSON parsing.
func BenchmarkCompareMillion(b *testing.B) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1536 << 20))
	dir := b.TempDir()
	refPath, candPath := filepath.Join(dir, "ref.jsonl"), filepath.Join(dir, "cand.jsonl")
	writeBenchRun(b, refPath, benchRecords, false)
	writeBenchRun(b, candPath, benchRecords, true)
	runtime.GC()
	b.ResetTimer()
	var rep *Report
	for i := 0; i < b.N; i++ {
		ref, err := Open(refPath)
		if err != nil {
			b.Fatal(err)
		}
		cand, err := Open(candPath)
		if err != nil {
			b.Fatal(err)
		}
		if rep, err = Compare([]*Input{ref}, []*Input{cand}, Options{Stall: DefaultStallOptions, Thresholds: DefaultGate}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "MiB-sys")
	b.ReportMetric(float64(rep.CandStalls.Count), "stalls")
	b.ReportMetric(readerSeconds(b, refPath, candPath), "s-bare-reader")
}

// readerSeconds is the wall time of one bare JSONLReader pass over both
// files, concurrently, as Compare reads them.
func readerSeconds(b *testing.B, paths ...string) float64 {
	start := time.Now()
	done := make(chan error, len(paths))
	for _, p := range paths {
		go func() { done <- eachAIPerfLine(p, func(*results.RecordMetrics) {}) }()
	}
	for range paths {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start).Seconds()
}
