package realrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// APIKeyEnv is the environment variable a run's API key is read from when
// none is given.
const APIKeyEnv = "SIMBENCH_API_KEY"

// ErrInterrupted is Result.Check's error for a run whose context was
// cancelled (its files are written).
var ErrInterrupted = errors.New("interrupted: files written for the requests that were sent")

// Options configure WriteRun.
type Options struct {
	// Config is the load generator's: endpoint, limits, pacing, progress.
	// Its StartAt comes from Shard, its Limits.Repeat from the workload.
	Config loadgen.Config
	// Spec is how the workload was made, for input_config; BenchmarkDuration
	// is the duration limit in seconds as given (0 = none).
	Spec              traces.Spec
	BenchmarkDuration float64
	// Shard is the whole workload and which part of it this run sends; the
	// zero Shard is the whole workload unsharded.
	Shard         Shard
	ServerMetrics ServerMetricsOptions
	// SLOs are --goodput's: the aggregate gets good_request_count,
	// goodput and slo_attainment, input_config records them.
	SLOs []results.SLO
	// Log gets the run's notes (most only unless Quiet); nil discards them.
	Log   io.Writer
	Quiet bool
	// Warn gets the run's warnings as they arise; nil drops them.
	Warn func([]error)
}

// warn hands ws to Warn, when there are any.
func (o Options) warn(ws []error) {
	if o.Warn != nil && len(ws) > 0 {
		o.Warn(ws)
	}
}

// Result is what WriteRun wrote.
type Result struct {
	Dir     string
	Report  *loadgen.Report
	Profile *results.Profile
	// Breakdown is the server's TTFT breakdown (ttft_breakdown.json), nil
	// when the server exports none.
	Breakdown *servermetrics.TTFTBreakdown
}

// WriteRun replays wl on the server and writes the run directory dir:
// profile_export.jsonl (each record as it finishes), the workload file,
// profile_export_aiperf.json and .csv with input_config (never the API
// key), and the server-metrics files when the server was scraped. A
// cancelled ctx stops the sends and cancels the requests in flight; the
// files are written all the same (see Result.Check).
func WriteRun(ctx context.Context, dir string, wl *traces.Workload, opts Options) (*Result, error) {
	opts.Log = orDiscard(opts.Log)
	cfg := opts.runConfig(wl)
	if _, err := loadgen.RaiseFileLimit(); err != nil && !opts.Quiet {
		opts.warn([]error{fmt.Errorf("could not raise the open-file limit: %w", err)})
	}
	sm, err := newServerMetrics(ctx, cfg.Endpoint.URL, opts)
	if err != nil {
		return nil, err
	}
	rw, err := results.CreateRun(dir, results.RunOptions{SLOs: opts.SLOs})
	if err != nil {
		return nil, err
	}
	if err := traces.WriteWorkloadFile(dir, wl); err != nil {
		return nil, err
	}
	sm.start(context.WithoutCancel(ctx))
	cfg.OnProfilingStart = sm.profilingStart
	rep, runErr := loadgen.Run(ctx, wl, cfg, sm.sink(rw.Add))
	sm.stop()
	if rep == nil {
		rep = &loadgen.Report{}
	}
	ic, icErr := inputConfig(dir, wl, &cfg, opts, rep.StartLate) // on error the records are still closed and aggregated
	var bd *servermetrics.TTFTBreakdown
	var spec *results.SpecDecode
	if runErr == nil && icErr == nil {
		bd, spec = sm.finish(dir, rep.StartNs, ic) // the aggregate takes the server's spec-decode values
	}
	p, err := rw.Close(results.RunMeta{InputConfig: ic, StartNs: rep.StartNs, EndNs: rep.EndNs, WasCancelled: rep.Interrupted,
		SpecDecode: spec})
	if runErr != nil || icErr != nil {
		return nil, errors.Join(runErr, icErr)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Dir: dir, Report: rep, Profile: p, Breakdown: bd}, nil
}

// runConfig completes the load generator's configuration for wl.
func (o Options) runConfig(wl *traces.Workload) loadgen.Config {
	cfg := o.Config
	cfg.StartAt = o.Shard.StartAt
	cfg.Limits.Repeat = cfg.Limits.Duration > 0 && !o.Spec.IsTrace() && o.Spec.RequestCount == nil &&
		wl.Concurrency > 0 && !hasTimestamps(wl)
	cfg.Endpoint.Prompts.BlockSize = wl.BlockSize
	if wl.BlockSize <= 0 {
		cfg.Endpoint.Prompts.BlockSize = traces.MooncakeBlockSize
	}
	return cfg
}

// WriteText prints the run's summary and the server's TTFT breakdown.
func (r *Result) WriteText(w io.Writer) error {
	if err := r.Report.WriteSummary(w, r.Profile); err != nil {
		return err
	}
	if r.Breakdown == nil {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return r.Breakdown.WriteText(w)
}

// Check is the run's outcome: ErrInterrupted after an interrupt, an error
// when no request succeeded or when more than maxShare of the finished
// requests failed (maxShare < 0: no bound), else nil. The counts are the
// aggregate's (request_count, error_request_count): a stream that ended
// without content is a failed request there, as in AIPerf.
func (r *Result) Check(maxShare float64) error {
	if r.Report.Interrupted {
		return ErrInterrupted
	}
	valid, _ := r.Profile.Value(results.TagRequestCount, "avg")
	failed, _ := r.Profile.Value(results.TagErrorRequestCount, "avg")
	finished := valid + failed
	if maxShare >= 0 && finished > 0 {
		if share := failed / finished; share > maxShare {
			return fmt.Errorf("%d of %d requests failed (%.2f%%), above --max-error-rate %.2f%%",
				int(failed), int(finished), 100*share, 100*maxShare)
		}
	}
	if valid == 0 {
		return fmt.Errorf("no request succeeded: %d sent, %d failed (their errors are in error_summary)", int(finished), int(failed))
	}
	return nil
}

func hasTimestamps(wl *traces.Workload) bool {
	for i := range wl.Requests {
		if wl.Requests[i].HasTimestamp {
			return true
		}
	}
	return false
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// Seconds converts seconds to a Duration.
func Seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
