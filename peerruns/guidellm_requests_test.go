package peerruns

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
)

// readGL05 decodes the first benchmark of a guidellm 0.4+ file.
func readGL05(t *testing.T, path string) *glBenchmark {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var f glFile
	require.NoError(t, json.Unmarshal(b, &f))
	require.NotEmpty(t, f.Benchmarks)
	return &f.Benchmarks[0]
}

// TestGuideLLMListStats computes AIPerf's statistics from three real
// requests of the 0.5.0.dev0 synchronous file (its requests.successful 2,
// 3 and 26) and checks them against values worked out by hand (Python,
// plain float arithmetic) from their timings (request_start,
// first_token_iteration, last_token_iteration, prompt_tokens,
// output_tokens):
//
//	1772472061.810036  1772472061.8708122 1772472092.685723  76 1024
//	1772472092.6887498 1772472092.7356563 1772472123.5551205 81 1024
//	1772472797.4482083 1772472797.4979715 1772472827.9392715 59 1024
//
// request_latency = (last − start)·1000 = 30875.687…, 30866.371…,
// 30491.063… ms; TTFT = (first − start)·1000 = 60.776…, 46.906…, 49.763…;
// ITL = (latency − TTFT)/1023; sorted, p90 sits at rank 1.8 (numpy's
// linear rule); the duration runs from the first start to the last token,
// 1772472827.9392715 − 1772472061.810036 = 766.12924 s.
func TestGuideLLMListStats(t *testing.T) {
	bm := readGL05(t, glFile05)
	v, err := glListCollect("subset", bm.Requests.Successful, []int{2, 3, 26})
	require.NoError(t, err)
	p := newProfile()
	require.NoError(t, v.fill(p, 0))
	v.perUser(p)
	for _, w := range []glWant{
		{results.TagRequestLatency, "avg", 30744.37363942464},
		{results.TagRequestLatency, "p50", 30866.370677947998},
		{results.TagRequestLatency, "p90", 30873.823833465576},
		{results.TagRequestLatency, "std", 179.15796426543835},
		{results.TagRequestLatency, "min", 30491.063117980957},
		{results.TagTTFT, "avg", 52.48196919759115},
		{results.TagTTFT, "p25", 48.33483695983887},
		{results.TagTTFT, "std", 5.979762870787977},
		{results.TagTTFT, "max", 60.7762336730957},
		{results.TagITL, "avg", 30.001849140006893},
		{results.TagITL, "p90", 30.125663287478808},
		{results.TagITL, "std", 0.1732208009304621},
		{results.TagOTPU, "avg", 33.332394557200054},
		{results.TagOTPU, "p25", 33.19576142372934},
		{results.TagPrefillPerUser, "avg", 1387.6481465231448},
		{results.TagPrefillPerUser, "p90", 1631.5702593107465},
		{results.TagISL, "avg", 72},
		{results.TagISL, "p25", 67.5},
		{results.TagISL, "std", 9.41629792788369},
		{results.TagOSL, "avg", 1024},
		{results.TagRequestCount, "avg", 3},
		{results.TagBenchmarkDuration, "avg", 766.1292355060577},
		{results.TagRequestThroughput, "avg", 0.003915788434856405},
		{results.TagOutputThroughput, "avg", 4.009767357292959},
		{results.TagTotalThroughput, "avg", 4.29170412460262},
		{results.TagTotalISL, "avg", 216},
		{results.TagTotalOSL, "avg", 3072},
	} {
		got, ok := p.p.Value(w.tag, w.stat)
		require.True(t, ok, "%s %s", w.tag, w.stat)
		assert.InEpsilon(t, w.value, got, 1e-12, "%s %s", w.tag, w.stat)
	}
	for _, tag := range []string{results.TagErrorRequestCount, results.TagICL, results.TagTTST} {
		_, ok := p.p.Value(tag, "avg")
		assert.False(t, ok, tag)
	}
}

// TestGuideLLMListWindow checks which requests guidellm's metrics count:
// those ending at or after the window's start and starting at or before
// its end. The real requests at the edges of the synchronous file's window
// (start_time 1772472082.2265189, end_time 1772472802.2265189): 1 ends
// before it opens, 2 straddles its start, 26 its end, 27 starts after it
// closes.
func TestGuideLLMListWindow(t *testing.T) {
	bm := readGL05(t, glFile05)
	from, to, ok := bm.window()
	require.True(t, ok)
	assert.Equal(t, 1772472082.2265189, from)
	assert.Equal(t, 1772472802.2265189, to)
	at := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name  string
		req   glRequest
		in    bool
		field string
	}{
		{name: "real 1: ends before the window", req: bm.Requests.Successful[1]},
		{name: "real 2: straddles its start", req: bm.Requests.Successful[2], in: true},
		{name: "real 3: inside", req: bm.Requests.Successful[3], in: true},
		{name: "real 26: straddles its end", req: bm.Requests.Successful[26], in: true},
		{name: "real 27: starts after it", req: bm.Requests.Successful[27]},
		{name: "ends exactly at its start", req: glRequest{RequestStartTime: at(from - 5), RequestEndTime: at(from)}, in: true},
		{name: "starts exactly at its end", req: glRequest{RequestStartTime: at(to), RequestEndTime: at(to + 5)}, in: true},
		{name: "no start, ends inside", req: glRequest{RequestEndTime: at(to - 1)}, in: true},
		{name: "no start, ends after", req: glRequest{RequestEndTime: at(to + 1)}},
		{name: "times from info.timings", req: func() glRequest {
			var q glRequest
			q.Info.Timings.RequestStart, q.Info.Timings.RequestEnd = at(from+1), at(from+2)
			return q
		}(), in: true},
		{name: "resolve times when the request's are absent", req: func() glRequest {
			var q glRequest
			q.Info.Timings.ResolveStart, q.Info.Timings.ResolveEnd = at(to+1), at(to+2)
			return q
		}()},
		{name: "no end", req: glRequest{RequestStartTime: at(from)}, field: "request_end_time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, field := tc.req.inWindow(from, to)
			assert.Equal(t, tc.in, in)
			assert.Equal(t, tc.field, field)
		})
	}
	sel, err := glSelect("f", "successful", bm.Requests.Successful, from, to)
	require.NoError(t, err)
	assert.Len(t, sel, 25)
	assert.Equal(t, 2, sel[0])
	assert.Equal(t, 26, sel[len(sel)-1])
}

// glFileMetrics are a 0.4+ benchmark's own totals and summaries.
type glFileMetrics struct {
	Totals  map[string]float64 `json:"request_totals"`
	Metrics map[string]struct {
		Successful glDist `json:"successful"`
	}
}

func readGLMetrics(t *testing.T, path string) glFileMetrics {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var f struct {
		Benchmarks []struct {
			Metrics map[string]json.RawMessage `json:"metrics"`
		} `json:"benchmarks"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	m := glFileMetrics{Metrics: map[string]struct {
		Successful glDist `json:"successful"`
	}{}}
	for k, raw := range f.Benchmarks[0].Metrics {
		if k == "request_totals" {
			require.NoError(t, json.Unmarshal(raw, &m.Totals))
			continue
		}
		var d struct {
			Successful glDist `json:"successful"`
		}
		if json.Unmarshal(raw, &d) == nil {
			m.Metrics[k] = d
		}
	}
	return m
}

// TestGuideLLMListMatchesFile checks that the statistics computed from the
// lists of both real 0.5.0.dev0 files agree with the files' own metrics:
// the same requests (the count, and guidellm's own request_latency
// averaged over them), means and sums exactly (ITL's weighted by OSL − 1,
// as guidellm's), min and max exactly, and percentiles within what the
// estimators allow: guidellm's is a sample within one rank of numpy's
// interpolation.
func TestGuideLLMListMatchesFile(t *testing.T) {
	for _, path := range []string{glFile05, glFile05c} {
		t.Run(path, func(t *testing.T) {
			file := readGLMetrics(t, path)
			bm := readGL05(t, path)
			run, err := Open(path)
			require.NoError(t, err)
			got := func(tag, stat string) float64 {
				v, ok := run.Profile.Value(tag, stat)
				require.True(t, ok, "%s %s", tag, stat)
				return v
			}
			m := func(name string) glDist { return file.Metrics[name].Successful }
			assert.Equal(t, file.Totals["successful"], got(results.TagRequestCount, "avg"))
			assert.NotContains(t, strings.Join(warningTexts(run), "\n"), "may not be those guidellm counted")

			from, to, _ := bm.window()
			sel, err := glSelect("f", "successful", bm.Requests.Successful, from, to)
			require.NoError(t, err)
			var theirLatency, weighted, weights float64
			var ttft, itl []float64
			for _, i := range sel {
				q := &bm.Requests.Successful[i]
				theirLatency += *q.RequestEndTime - *q.RequestStartTime
				tt := &q.Info.Timings
				lat, ft := (*tt.LastToken-*tt.RequestStart)*1000, (*tt.FirstToken-*tt.RequestStart)*1000
				osl := *q.OutputTokens
				weighted += (lat - ft) / (osl - 1) * (osl - 1)
				weights += osl - 1
				ttft = append(ttft, ft)
				itl = append(itl, (lat-ft)/(osl-1))
			}
			assert.InDelta(t, *m("request_latency").Mean, theirLatency/float64(len(sel)), 1e-9, "guidellm's latency over the selection")
			assert.Less(t, got(results.TagRequestLatency, "avg"), *m("request_latency").Mean*1000, "AIPerf's ends at the last token")
			assert.InDelta(t, *m("time_to_first_token_ms").Mean, got(results.TagTTFT, "avg"), 1e-9)
			assert.InDelta(t, *m("time_to_first_token_ms").TotalSum, got(results.TagTTFT, "sum"), 1e-9)
			assert.InDelta(t, *m("inter_token_latency_ms").Mean, weighted/weights, 1e-9)
			for _, c := range []struct {
				tag, name string
			}{{results.TagTTFT, "time_to_first_token_ms"}, {results.TagITL, "inter_token_latency_ms"},
				{results.TagISL, "prompt_token_count"}, {results.TagOSL, "output_token_count"}} {
				assert.InDelta(t, *m(c.name).Min, got(c.tag, "min"), 1e-9, c.name)
				assert.InDelta(t, *m(c.name).Max, got(c.tag, "max"), 1e-9, c.name)
			}
			assert.Equal(t, *m("prompt_token_count").TotalSum, got(results.TagTotalISL, "avg"))
			assert.Equal(t, *m("output_token_count").TotalSum, got(results.TagTotalOSL, "avg"))
			assert.Equal(t, *m("prompt_token_count").Mean, got(results.TagISL, "avg"))
			for _, c := range []struct {
				name   string
				values []float64
			}{{"time_to_first_token_ms", ttft}, {"inter_token_latency_ms", itl}} {
				for _, p := range []string{"p25", "p50", "p90", "p99"} {
					assertNearRank(t, c.values, p, m(c.name).Percentiles[p])
				}
			}
		})
	}
}

// assertNearRank checks that guidellm's percentile p of values is one of
// them, within one rank of numpy's interpolation position.
func assertNearRank(t *testing.T, values []float64, p string, theirs float64) {
	t.Helper()
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	pct, err := strconv.ParseFloat(p[1:], 64)
	require.NoError(t, err)
	r := pct / 100 * float64(len(sorted)-1)
	lo, hi := max(int(math.Floor(r))-1, 0), min(int(math.Ceil(r))+1, len(sorted)-1)
	assert.Contains(t, sorted[lo:hi+1], theirs, "%s: guidellm's %v is not a sample near rank %.2f", p, theirs, r)
}

// TestGuideLLMListFallback checks when the lists are not read (the
// aggregates are, as before) and how broken lists fail.
func TestGuideLLMListFallback(t *testing.T) {
	noWindow := edited(t, edited(t, glFile05, `"start_time": 1772472082.2265189`, `"start": 1772472082.2265189`),
		`"measure_start_time": 1772472082.2265189`, `"measure_start": 1772472082.2265189`)
	for _, tc := range []struct {
		name, path string
		lists      bool
		count      float64
		errors     float64
		warning    string
		err        string
	}{
		{name: "lists emptied (0.6.0.dev2)", path: glFileA + "/benchmark_0", count: 40, warning: glEstimatorWarning},
		{name: "no measurement window", path: noWindow, count: 25, warning: "the benchmark has no measurement window"},
		{name: "totals other than the window's (sampled lists)", count: 26,
			path:    edited(t, glFile05, `"request_totals": {"successful": 25,`, `"request_totals": {"successful": 26,`),
			warning: "of their 30 successful and 0 errored requests, 25 and 0 overlap the measurement window, where metrics.request_totals counts 26 and 0"},
		{name: "a counted request without a token", lists: true, count: 24, errors: 1,
			path:    edited(t, glFile05, `"first_token_iteration": 1772472061.8708122`, `"first_token_iteration": null`),
			warning: "1 successful request(s) streamed no token"},
		{name: "a counted request without its last token",
			path: edited(t, glFile05, `"last_token_iteration": 1772472092.685723,`, `"last_token": 1772472092.685723,`),
			err:  `benchmarks[0]: field "requests.successful[2].info.timings.last_token_iteration" is missing`},
		{name: "a request without an end",
			path: edited(t, edited(t, edited(t, glFile05, `"request_end_time": 1772472092.6882744`, `"end": 1772472092.6882744`),
				`"request_end": 1772472092.6882744`, `"end": 1772472092.6882744`), `"resolve_end": 1772472092.6885161`, `"end": 1772472092.6885161`),
			err: `benchmarks[0]: field "requests.successful[2].request_end_time" is missing`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := Open(tc.path)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			warnings := strings.Join(warningTexts(run), "\n")
			assert.Contains(t, warnings, tc.warning)
			assert.Equal(t, tc.lists, strings.Contains(warnings, "the per-request lists are read"))
			assert.Equal(t, tc.lists, run.Workload != nil)
			count, _ := run.Profile.Value(results.TagRequestCount, "avg")
			assert.Equal(t, tc.count, count)
			errs, _ := run.Profile.Value(results.TagErrorRequestCount, "avg")
			assert.Equal(t, tc.errors, errs)
		})
	}
}

// TestGuideLLMListWorkload checks the workload rebuilt from the lists:
// the counted requests in the order sent, at their start times, under the
// strategy's cap.
func TestGuideLLMListWorkload(t *testing.T) {
	for _, tc := range []struct {
		name     string
		path     string
		n, cap   int
		firstISL []int
		firstMs  []float64
	}{
		// concurrent, 4 streams: listed as completed (ISL 81, 106, 133, 76), sent 133, 106, 81, 76
		{"concurrent 4", glFile05c, 4, 4, []int{133, 106, 81, 76}, []float64{0, 0.706, 0.927, 1.221}},
		// synchronous: requests 2 … 26 of the lists
		{"synchronous", glFile05, 25, 1, []int{76, 81, 63}, []float64{0, 30878.714, 61747.942}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := Open(tc.path)
			require.NoError(t, err)
			wl := run.Workload
			require.NotNil(t, wl)
			assert.Len(t, wl.Requests, tc.n)
			assert.Equal(t, tc.cap, wl.Concurrency)
			for i, isl := range tc.firstISL {
				q := wl.Requests[i]
				assert.Equal(t, isl, q.InputLength, "request %d", i)
				assert.Equal(t, 1024, q.OutputLength, "request %d", i)
				assert.True(t, q.HasTimestamp)
				assert.InDelta(t, tc.firstMs[i], q.TimestampMs, 1e-9, "request %d", i)
			}
			ic, err := results.ParseInputConfig(run.Profile.InputConfig)
			require.NoError(t, err)
			require.NotNil(t, ic.Workload)
			assert.Equal(t, wl.Digest, ic.Workload.Digest)
			assert.Equal(t, tc.cap, ic.Loadgen.Concurrency)
		})
	}
}

// TestGuideLLMStrategyConcurrency checks the cap read from each strategy.
func TestGuideLLMStrategyConcurrency(t *testing.T) {
	n := func(v int) *int { return &v }
	rate := 2.0
	for _, tc := range []struct {
		name string
		st   glStrategy
		want int
	}{
		{"synchronous (0.5 writes max_concurrency 1)", glStrategy{Type: "synchronous", MaxConcurrency: n(1)}, 1},
		{"synchronous without it", glStrategy{Type: "synchronous"}, 1},
		{"concurrent: streams", glStrategy{Type: "concurrent", Streams: n(4)}, 4},
		{"throughput: max_concurrency", glStrategy{Type: "throughput", MaxConcurrency: n(64)}, 64},
		{"constant rate: none", glStrategy{Type: "constant", Rate: &rate}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.st.concurrency())
		})
	}
}
