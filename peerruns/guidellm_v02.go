package peerruns

import (
	"encoding/json"
	"fmt"
)

// gl02File is a guidellm benchmarks file of guidellm 0.2 or 0.3: the
// request totals, the strategy (args.strategy) and the model
// (worker.backend_model) are members of each benchmark.
type gl02File struct {
	Benchmarks []gl02Benchmark `json:"benchmarks"`
}

type gl02Benchmark struct {
	Args struct {
		Strategy glStrategy `json:"strategy"`
	} `json:"args"`
	Worker struct {
		BackendModel *string `json:"backend_model"`
	} `json:"worker"`
	RequestTotals json.RawMessage            `json:"request_totals"`
	Metrics       map[string]json.RawMessage `json:"metrics"`
	Duration      *float64                   `json:"duration"`
}

// openGuideLLM02 reads a benchmark of guidellm 0.2 or 0.3.
func openGuideLLM02(path string, b []byte, index int) (*Run, error) {
	var f gl02File
	if err := decodeJSON(path, b, &f); err != nil {
		return nil, err
	}
	index, err := glPick(path, index, len(f.Benchmarks))
	if err != nil {
		return nil, err
	}
	bm := &f.Benchmarks[index]
	s := &glSummary{where: fmt.Sprintf("%s: benchmarks[%d]", path, index), totalsField: "request_totals",
		totals: bm.RequestTotals, metrics: bm.Metrics, duration: bm.Duration,
		strategy: bm.Args.Strategy, model: firstModel(bm.Worker.BackendModel)}
	run := newGuideLLMRun(path, index)
	run.warn("%s; without a p50 among them (guidellm 0.2) p50 is its median, of the same estimator; "+
		"its time_per_output_token_ms divides first to last token by all the output tokens and is not compared", glEstimatorWarning)
	run.warn("benchmark_duration is guidellm's duration, from the first request's start to the last request's end over " +
		"successful, errored and incomplete requests alike (AIPerf's spans the successful ones); the throughputs divide by it")
	return run, s.fill(run)
}
