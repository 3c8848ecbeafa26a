package sim

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

const conversationTrace = "../../shared/traces/conversation_trace.jsonl"

// BenchmarkReplayConversation replays the full Mooncake conversation trace
// (12,031 requests) on 4 vllm workers behind the kv router, records
// discarded, with server metrics collected (scraped every 333 virtual ms)
// and without, so one run gives their cost as a ratio. Goal: ≥ 20,000
// requests per wall second on 2 cores with metrics.
func BenchmarkReplayConversation(b *testing.B) {
	wl, _, err := traces.LoadMooncake(conversationTrace)
	if err != nil {
		b.Skipf("conversation trace not available: %v", err)
	}
	cfg := DefaultConfig()
	cfg.Workers, cfg.Router.Policy, cfg.Seed = 4, "kv", 7
	for _, metrics := range []bool{true, false} {
		b.Run(fmt.Sprintf("metrics=%v", metrics), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				var opts []Option
				if metrics {
					opts = append(opts, WithServerMetrics(servermetrics.NewCollector(ServerMetricsEndpoints(cfg))))
				}
				if _, err := Run(context.Background(), cfg, wl, nil, opts...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(wl.Requests)*b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkReplayConversationDisagg replays the full conversation trace on
// 4 aggregated workers and on 1 prefill + 3 decode workers, both behind the
// kv router with server metrics, so one run gives the cost of the
// disaggregated path as a ratio. Goal: disaggregated within 1.5× the
// aggregated wall time.
func BenchmarkReplayConversationDisagg(b *testing.B) {
	wl, _, err := traces.LoadMooncake(conversationTrace)
	if err != nil {
		b.Skipf("conversation trace not available: %v", err)
	}
	agg := DefaultConfig()
	agg.Workers, agg.Router.Policy, agg.Seed = 4, "kv", 7
	pd := agg
	pd.Disaggregation = DefaultDisaggregation()
	pd.Disaggregation.PrefillWorkers, pd.Disaggregation.DecodeWorkers = 1, 3
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"aggregated-4", agg}, {"prefill-1-decode-3", pd}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				col := servermetrics.NewCollector(ServerMetricsEndpoints(tc.cfg))
				if _, err := Run(context.Background(), tc.cfg, wl, nil, WithServerMetrics(col)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(wl.Requests)*b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkWriteRunConversation is BenchmarkReplayConversation plus the
// files (what `simbench sim --trace ... -o DIR` does after loading the
// trace): the AIPerf JSONL, aggregates and sim_summary.json. Goal: the whole
// CLI run under 3 s.
func BenchmarkWriteRunConversation(b *testing.B) {
	wl, _, err := traces.LoadMooncake(conversationTrace)
	if err != nil {
		b.Skipf("conversation trace not available: %v", err)
	}
	cfg := DefaultConfig()
	cfg.Workers, cfg.Router.Policy, cfg.Seed = 4, "kv", 7
	dir := b.TempDir()
	b.ResetTimer()
	for range b.N {
		if _, err := WriteRun(context.Background(), dir, cfg, wl, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(wl.Requests)*b.N)/b.Elapsed().Seconds(), "req/s")
}

// selected reports whether -test.bench names this benchmark explicitly (not
// through a catch-all pattern such as "." used by `make bench`).
func selected(name string) bool {
	f := flag.Lookup("test.bench")
	return f != nil && strings.Contains(f.Value.String(), name)
}

// BenchmarkSynthetic1M simulates one million synthetic closed-loop requests
// (concurrency 256, ISL 1000±200, OSL 200±50) on 8 workers with the kv
// router, and reports wall time and the Go heap high-water mark. It runs
// only when -bench names it: go test -run '^$' -bench Synthetic1M ./sim/
func BenchmarkSynthetic1M(b *testing.B) {
	if !selected("Synthetic1M") {
		b.Skip("run with -bench Synthetic1M")
	}
	wl, err := traces.Synthesize(traces.SynthSpec{Mode: traces.ModeConcurrency, Concurrency: 256,
		RequestCount: 1_000_000, ISL: 1000, ISLStddev: 200, OSL: 200, OSLStddev: 50,
		SharedPrefixTokens: 512, NumPrefixGroups: 4, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Workers, cfg.Router.Policy = 8, "kv"
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n := 0
		sink := func(r *results.Record) error { n++; return nil }
		col := servermetrics.NewCollector(ServerMetricsEndpoints(cfg))
		if _, err := Run(context.Background(), cfg, wl, sink, WithServerMetrics(col)); err != nil {
			b.Fatal(err)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
	b.ReportMetric(float64(ms.Sys)/(1<<20), "MiB-sys")
}
