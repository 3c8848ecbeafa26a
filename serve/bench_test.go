package serve

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// childEnv makes this test binary a serve process for the benchmark (the
// value is the address): its CPU is then apart from the load generator's.
const childEnv = "SIMBENCH_SERVE_BENCH_ADDR"

func TestMain(m *testing.M) {
	if addr := os.Getenv(childEnv); addr != "" {
		os.Exit(serveChild(addr))
	}
	os.Exit(m.Run())
}

// benchCfg is one vLLM worker that holds a thousand streams in one batch:
// a 20 ms step, so a 100-token stream lasts 2 s.
func benchCfg() sim.Config {
	cfg := linearCfg(20)
	cfg.Engine.MaxNumSeqs = 4096
	cfg.Engine.NumGPUBlocks = 100_000
	cfg.Engine.MaxNumBatchedTokens = 1 << 20
	return cfg
}

func serveChild(addr string) int {
	s, err := New(benchCfg(), Options{Model: "m", Speedup: 1})
	if err == nil {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			fmt.Println("listening " + ln.Addr().String())
			err = s.Serve(context.Background(), ln)
		}
	}
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// startChild runs serve in a child process; stop kills it and returns the
// CPU time it used.
func startChild(b *testing.B) (url string, stop func() time.Duration) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=127.0.0.1:0")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		b.Fatal(err)
	}
	var once sync.Once
	var cpu time.Duration
	stop = func() time.Duration {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		})
		return cpu
	}
	b.Cleanup(func() { stop() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		b.Fatalf("serve did not start: %q %v", line, err)
	}
	return "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening ")), stop
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStreams is issue 44's scale check: N concurrent 100-token
// streams (N requests sent at once, concurrency N) from serve in a child
// process to `simbench run`'s load generator in this one. It reports the
// streams held at once, serve's CPU per streamed token (the child's
// whole CPU time over the tokens) and the load generator's (this
// process's CPU during the run), side by side:
//
//	go test -run '^$' -bench BenchmarkStreams -benchtime 1x ./serve/
func BenchmarkStreams(b *testing.B) {
	if _, err := loadgen.RaiseFileLimit(); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				benchStreams(b, n, 100)
			}
		})
	}
}

func benchStreams(b *testing.B, n, osl int) {
	url, stop := startChild(b)
	var reqs []traces.Request
	for i := range n {
		reqs = append(reqs, traces.Request{Row: i, InputLength: 64, OutputLength: osl})
	}
	wl := &traces.Workload{Requests: reqs, BlockSize: 16, Concurrency: n, Source: "bench", Digest: traces.ComputeDigest(reqs)}
	ep := loadgen.Endpoint{URL: url, Type: loadgen.EndpointCompletions, Model: "m", Streaming: true, Timeout: time.Minute,
		Prompts: loadgen.Prompts{BlockSize: 16}}
	var mu sync.Mutex
	var recs []*results.Record
	cpu0 := selfCPU()
	_, err := loadgen.Run(context.Background(), wl, loadgen.Config{Endpoint: ep}, func(r *results.Record) (results.RecordMetrics, error) {
		mu.Lock()
		defer mu.Unlock()
		recs = append(recs, r)
		return results.RecordMetrics{}, nil
	})
	client := selfCPU() - cpu0
	server := stop()
	if err != nil {
		b.Fatal(err)
	}
	tokens, lastStart := 0, int64(0)
	for _, r := range recs {
		if r.Error != nil {
			b.Fatalf("request %s: %s", r.ID, r.Error.Message)
		}
		tokens += len(r.Chunks)
		lastStart = max(lastStart, r.StartNs)
	}
	held := 0
	for _, r := range recs {
		if r.EndNs >= lastStart {
			held++
		}
	}
	b.ReportMetric(float64(held), "streams-held")
	b.ReportMetric(float64(server.Microseconds())/float64(tokens), "serve-cpu-µs/token")
	b.ReportMetric(float64(client.Microseconds())/float64(tokens), "run-cpu-µs/token")
}
