package loadgen

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/simbench/simbench/loadgen/openaitest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/tokenizer"
	"github.com/simbench/simbench/tokenizer/tokenizertest"
	"github.com/simbench/simbench/traces"
)

// serveEnv makes the test binary a streaming server (see TestMain): the
// benchmark runs the server in its own process so getrusage measures the
// client alone. Run it by hand for other clients (vegeta):
//
//	SIMBENCH_OPENAITEST_SERVE=127.0.0.1:18080 ./loadgen.test
const serveEnv = "SIMBENCH_OPENAITEST_SERVE"

func TestMain(m *testing.M) {
	if addr := os.Getenv(serveEnv); addr != "" {
		os.Exit(serve(addr))
	}
	os.Exit(m.Run())
}

// serve runs the benchmark server: SIMBENCH_BENCH_TOKENS-token streams
// (default 100), first token after SIMBENCH_BENCH_TTFT (default 20 ms), then
// one every SIMBENCH_BENCH_ITL (default 20 ms), so each stream stays open
// about 2 s. It is openaitest.FastServer, or the net/http one with
// SIMBENCH_BENCH_SERVER=nethttp.
func serve(addr string) int {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("listening %s\n", l.Addr())
	ttft, itl := envDur("SIMBENCH_BENCH_TTFT", 20*time.Millisecond), envDur("SIMBENCH_BENCH_ITL", 20*time.Millisecond)
	tokens := benchTokens()
	if os.Getenv("SIMBENCH_BENCH_SERVER") == "nethttp" {
		err = (&http.Server{Handler: &openaitest.Server{TTFT: ttft, ITL: itl, Tokens: tokens}}).Serve(l)
	} else {
		err = (&openaitest.FastServer{TTFT: ttft, ITL: itl, Tokens: tokens}).Serve(l)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func envDur(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// benchTokens is the streams' length (SIMBENCH_BENCH_TOKENS, default 100).
func benchTokens() int { return int(envFloat("SIMBENCH_BENCH_TOKENS", 100)) }

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		return v
	}
	return def
}

// startServer runs this test binary as the server and returns its URL and a
// function that stops it and returns the CPU time it used. With
// SIMBENCH_BENCH_URL set it uses that server instead (one server for
// several clients, as loadgen/scripts/vegeta_compare.sh runs them) and
// reports no server CPU.
func startServer(b *testing.B) (string, func() time.Duration) {
	b.Helper()
	if u := os.Getenv("SIMBENCH_BENCH_URL"); u != "" {
		return u, func() time.Duration { return 0 }
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"=127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stopped := false
	stop := func() time.Duration {
		if stopped {
			return 0
		}
		stopped = true
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.Cleanup(func() { stop() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		b.Fatalf("server did not start: %q %v", line, err)
	}
	return "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening ")), stop
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStream is the speed check: a constant-rate schedule
// (SIMBENCH_BENCH_RATE req/s, default 2000) for SIMBENCH_BENCH_SECONDS
// (default 5; the figure uses 30) of SIMBENCH_BENCH_TOKENS-token
// streams (default 100) from a server in another process, records written to a run directory as in a
// real run. It reports the achieved rate, send lag p50/p99, the share of
// sends > 1 ms late, client CPU per streamed token, the time spent spinning
// and the peak number of open streams. Run it once:
//
//	go test -run '^$' -bench BenchmarkStream -benchtime 1x ./loadgen/
func BenchmarkStream(b *testing.B) {
	url, stopServer := startServer(b)
	rate, secs := envFloat("SIMBENCH_BENCH_RATE", 2000), envFloat("SIMBENCH_BENCH_SECONDS", 5)
	wl, err := traces.Synthesize(traces.SynthSpec{Mode: traces.ModeConstant, Rate: rate,
		RequestCount: int(rate * secs), ISL: 100, OSL: benchTokens(), Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := RaiseFileLimit(); err != nil {
		b.Fatal(err)
	}
	ep := Endpoint{URL: url, Type: EndpointChat, Model: "bench", Streaming: true, Timeout: time.Minute,
		Prompts: Prompts{BlockSize: 512, Seed: 1}}
	spin := envDur("SIMBENCH_BENCH_SPIN", DefaultSpin)
	if spin == 0 {
		spin = -1
	}
	start := time.Now()
	for range b.N {
		benchOnce(b, wl, Config{Endpoint: ep, Spin: spin})
	}
	if cpu := stopServer(); cpu > 0 {
		b.ReportMetric(cpu.Seconds()/time.Since(start).Seconds(), "server-cpu-cores")
	}
}

func benchOnce(b *testing.B, wl *traces.Workload, cfg Config) {
	rw, err := results.CreateRun(filepath.Join(b.TempDir(), "run"), results.RunOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var spans [][2]int64
	tokens := 0
	sink := func(r *results.Record) (results.RecordMetrics, error) {
		spans = append(spans, [2]int64{r.StartNs, r.EndNs})
		for _, c := range r.Chunks {
			tokens += c.Tokens
		}
		return rw.Add(r)
	}
	locked := lockedSink(sink)
	cpu0 := cpuTime()
	rep, err := Run(context.Background(), wl, cfg, locked)
	cpu := cpuTime() - cpu0
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rw.Close(results.RunMeta{}); err != nil {
		b.Fatal(err)
	}
	reportBench(b, rep, cpu, tokens, peakOpen(spans))
}

// lockedSink serialises the benchmark's own bookkeeping.
func lockedSink(s Sink) Sink {
	ch := make(chan struct{}, 1)
	return func(r *results.Record) (results.RecordMetrics, error) {
		ch <- struct{}{}
		defer func() { <-ch }()
		return s(r)
	}
}

func reportBench(b *testing.B, rep *Report, cpu time.Duration, tokens, peak int) {
	req, _ := rep.RequestedRate()
	got, _ := rep.AchievedRate()
	lag, late, _ := rep.SendLag()
	b.ReportMetric(got, "req/s")
	b.ReportMetric((got/req-1)*100, "rate-err-%")
	b.ReportMetric(lag.P[4], "lag-p50-ms")
	b.ReportMetric(lag.P[8], "lag-p99-ms")
	b.ReportMetric(lag.Max, "lag-max-ms")
	b.ReportMetric(100*float64(late)/float64(max(lag.Count, 1)), "late>1ms-%")
	if d, ok := rep.DispatchLag(); ok {
		b.ReportMetric(d.P[8], "dispatch-p99-ms")
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(max(tokens, 1)), "cpu-µs/token")
	b.ReportMetric(cpu.Seconds()/(float64(rep.EndNs-rep.StartNs)/1e9), "cpu-cores")
	b.ReportMetric(rep.Spin.Seconds()/(float64(rep.EndNs-rep.StartNs)/1e9), "spin-cores")
	b.ReportMetric(float64(peak), "open-streams")
	b.ReportMetric(float64(rep.Errors), "errors")
	b.ReportMetric(float64(tokens), "tokens")
}

// peakOpen is the largest number of overlapping [start, end] spans.
func peakOpen(spans [][2]int64) int {
	type ev struct {
		t int64
		d int
	}
	evs := make([]ev, 0, 2*len(spans))
	for _, s := range spans {
		evs = append(evs, ev{s[0], 1}, ev{s[1], -1})
	}
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.d, b.d)) })
	open, peak := 0, 0
	for _, e := range evs {
		open += e.d
		peak = max(peak, open)
	}
	return peak
}

// BenchmarkSSEChunk is the client's per-token work apart from the socket:
// SSE framing, JSON decoding and token counting of one chat chunk.
func BenchmarkSSEChunk(b *testing.B) {
	ev := []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	x := &exchange{st: newStream(), rec: &results.Record{Chunks: make([]results.Chunk, 0, 1)}, c: &client{ep: &Endpoint{}}}
	b.ReportAllocs()
	b.SetBytes(int64(len(ev)))
	for range b.N {
		x.rec.Chunks = x.rec.Chunks[:0]
		x.feed(ev)
	}
}

// BenchmarkTokenCount is the client's whole per-token work for a 200-token
// answer streamed one token per chunk (SSE framing, JSON decoding, token
// counting and the end-of-request count), with the word heuristic and with
// the real Qwen3 tokenizer (--tokenizer): the difference is what exact
// counting costs per token.
//
//	go test -run '^$' -bench BenchmarkTokenCount ./loadgen/
func BenchmarkTokenCount(b *testing.B) {
	text := "The quick brown fox jumps over the lazy dog, then it runs 42 miles to the river. 你好，世界！ " +
		"func main() { fmt.Println(\"hi\") } and the rest of the answer follows in plain English words. "
	qwen := tokenizertest.Qwen3(b)
	var chunks [][]byte
	var pending []byte
	for _, id := range qwen.Encode(nil, []byte(strings.Repeat(text, 4))) {
		pending, _ = qwen.Decode(pending, []int32{id})
		if utf8.Valid(pending) {
			js, _ := json.Marshal(string(pending))
			chunks = append(chunks, []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":`+
				string(js)+`},"logprobs":null,"finish_reason":null}]}`+"\n\n"))
			pending = nil
		}
	}
	for _, tc := range []struct {
		name string
		tk   *tokenizer.Tokenizer
	}{{"approx", nil}, {"qwen3", qwen}} {
		b.Run(tc.name, func(b *testing.B) {
			ep := &Endpoint{Prompts: Prompts{Tokenizer: tc.tk}}
			c := &client{ep: ep}
			st := newStream()
			rec := &results.Record{Chunks: make([]results.Chunk, 0, len(chunks))}
			x := &exchange{st: st, rec: rec, c: c}
			b.ReportAllocs()
			tokens := 0
			for range b.N {
				rec.Chunks, rec.Error = rec.Chunks[:0], nil
				st.tally.reset()
				for _, ev := range chunks {
					x.feed(ev)
				}
				c.finish(st, rec)
				tokens += len(chunks)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tokens), "ns/token")
		})
	}
}
