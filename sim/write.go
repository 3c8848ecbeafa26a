package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// SummaryName is the simulator's own summary file in a run directory.
const SummaryName = "sim_summary.json"

// RunFiles is what WriteRun wrote.
type RunFiles struct {
	Summary *Summary
	Profile *results.Profile
	Dir     string
	// ServerMetrics is server_metrics_export.json and TTFTBreakdown
	// ttft_breakdown.json (the Dynamo frontend's exclusive breakdown); nil
	// when server_metrics.enabled is false (or no request got a first token,
	// for the breakdown).
	ServerMetrics *servermetrics.Export
	TTFTBreakdown *servermetrics.TTFTBreakdown
}

// WriteRun simulates wl and writes the run directory dir: the AIPerf files
// (profile_export.jsonl, profile_export_aiperf.json and .csv, through
// results.RunWriter), sim_summary.json and, with server_metrics.enabled,
// server_metrics_export.json and .csv (the simulated servers' metrics over the
// profiling window, see ServerMetricsWindow) and ttft_breakdown.json. input is the AIPerf-like
// input_config describing the workload (its loadgen and input sections);
// WriteRun adds "endpoint" when absent, "workload" and "sim" (the effective
// configuration). The files depend only on the inputs.
//
// Every input (configuration, timing table, workload) is checked before a
// file is created, and a run that fails midway leaves no aggregate files
// and no profile_export.jsonl behind: nothing that looks like a finished run.
func WriteRun(ctx context.Context, dir string, cfg Config, wl *traces.Workload, input *results.InputConfig, opts ...Option) (*RunFiles, error) {
	var col *servermetrics.Collector
	if cfg.ServerMetrics.Enabled {
		col = servermetrics.NewCollector(ServerMetricsEndpoints(cfg))
		opts = append(opts[:len(opts):len(opts)], WithServerMetrics(col))
	}
	var w *recordWriter
	s, err := newSimulator(cfg, wl, func(r *results.Record) error { return w.add(r) }, opts)
	if err != nil {
		return nil, err
	}
	rw, err := results.CreateRun(dir, results.RunOptions{Buffered: true, SLOs: s.opts.slos})
	if err != nil {
		return nil, err
	}
	w = startWriter(rw)
	sum, runErr := s.run(ctx)
	writeErr := w.wait()
	meta, metaErr := runMeta(cfg, wl, input, sum)
	if err := errors.Join(runErr, writeErr, metaErr); err != nil {
		return nil, errors.Join(err, rw.Discard())
	}
	var exp *servermetrics.Export
	if col != nil {
		exp = col.Export(ServerMetricsWindow(sum), nil)
		if s, ok := servermetrics.SpecDecode(exp); ok {
			meta.SpecDecode = &s // from the workers' registries, as a real run's from its server's
		}
	}
	prof, err := rw.Close(meta)
	if err != nil {
		return nil, errors.Join(err, rw.Discard())
	}
	if err := writeJSON(filepath.Join(dir, SummaryName), sum); err != nil {
		return nil, errors.Join(err, DiscardRun(dir))
	}
	files := &RunFiles{Summary: sum, Profile: prof, Dir: dir}
	if exp != nil {
		if err := writeServerMetrics(files, exp, meta); err != nil {
			return nil, errors.Join(err, DiscardRun(dir))
		}
	}
	return files, nil
}

// DiscardRun removes the files of a simulated run from dir (the records,
// the aggregates, the summary, the server metrics, the workload) and dir
// itself when that leaves it empty: after a late failure (a full disk) no
// complete-looking run stays. Other files in dir stay.
func DiscardRun(dir string) error {
	var errs []error
	for _, name := range []string{results.RecordsName, results.ProfileJSONName, results.ProfileCSVName, SummaryName,
		servermetrics.JSONName, servermetrics.CSVName, servermetrics.TTFTBreakdownName, traces.WorkloadFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(dir) // only when empty
	return errors.Join(errs...)
}

// writeServerMetrics writes the export over the profiling window as
// server_metrics_export.json and .csv, with the profile's input_config, and
// the Dynamo TTFT breakdown.
func writeServerMetrics(f *RunFiles, e *servermetrics.Export, meta results.RunMeta) error {
	e.InputConfig, e.BenchmarkID = f.Profile.InputConfig, meta.BenchmarkID
	b, err := servermetrics.WriteFiles(f.Dir, e)
	f.ServerMetrics, f.TTFTBreakdown = e, b
	return err
}

// recordWriter adds records to a RunWriter on a goroutine of its own, in
// the order they were produced, so formatting the JSONL overlaps the
// simulation (one pipeline stage, not a goroutine per request).
type recordWriter struct {
	ch   chan *results.Record
	done chan struct{}
	err  atomic.Pointer[error]
}

func startWriter(rw *results.RunWriter) *recordWriter {
	w := &recordWriter{ch: make(chan *results.Record, 4096), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for r := range w.ch {
			if w.err.Load() != nil {
				continue
			}
			if _, err := rw.Add(r); err != nil {
				w.err.Store(&err)
			}
		}
	}()
	return w
}

func (w *recordWriter) add(r *results.Record) error {
	if err := w.err.Load(); err != nil {
		return *err
	}
	w.ch <- r
	return nil
}

// wait drains the queue and returns the first write error.
func (w *recordWriter) wait() error {
	close(w.ch)
	<-w.done
	if err := w.err.Load(); err != nil {
		return *err
	}
	return nil
}

func runMeta(cfg Config, wl *traces.Workload, input *results.InputConfig, sum *Summary) (results.RunMeta, error) {
	ic, err := InputConfig(cfg, wl, input)
	if err != nil {
		return results.RunMeta{}, err
	}
	id, err := BenchmarkID(cfg, wl)
	if err != nil {
		return results.RunMeta{}, err
	}
	meta := results.RunMeta{BenchmarkID: id, InputConfig: ic, StartNs: Epoch}
	if sum != nil {
		meta.EndNs = Epoch + sum.SimulatedNs
	}
	return meta, nil
}

// InputConfig is the input_config of a simulated run: input's sections
// (input may be nil) plus "endpoint" (when input has none), "workload"
// (source, digest, size) and "sim" (the configuration, keyed as in the
// YAML). input is not modified.
func InputConfig(cfg Config, wl *traces.Workload, input *results.InputConfig) (*results.InputConfig, error) {
	var out results.InputConfig
	if input != nil {
		out = *input
	}
	if out.Endpoint == nil {
		out.Endpoint = &results.EndpointConfig{ModelNames: []string{cfg.Hardware.Model}, Type: "chat",
			Streaming: true, URL: "sim://" + cfg.Engine.Type}
	}
	out.Workload = &results.WorkloadInfo{Source: wl.Source, Digest: wl.Digest,
		Requests: len(wl.Requests), BlockSize: wl.BlockSize, Concurrency: wl.Concurrency}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sim configuration: %w", err)
	}
	out.Sim = b
	return &out, nil
}

// BenchmarkID is a UUID-shaped id derived from the configuration and the
// workload digest, so reruns of the same simulation carry the same id.
func BenchmarkID(cfg Config, wl *traces.Workload) (string, error) {
	b, err := cfg.YAML()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(b)
	h.Write([]byte(wl.Digest))
	x := hex.EncodeToString(h.Sum(nil))
	return fmt.Sprintf("%s-%s-%s-%s-%s", x[0:8], x[8:12], x[12:16], x[16:20], x[20:32]), nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return results.WriteBytes(path, append(b, '\n'))
}
