package results

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// RunMeta is what a run knows about itself beyond its records.
type RunMeta struct {
	BenchmarkID  string
	InputConfig  *InputConfig // written as input_config when not nil
	StartNs      int64
	EndNs        int64
	WasCancelled bool
	// SpecDecode is the server's speculative decoding counters over the
	// profiling window, put into the aggregate (Profile.AddSpecDecode);
	// nil when the server drafted nothing or was not scraped.
	SpecDecode *SpecDecode
}

// RunWriter writes a run directory: each finished request goes to
// profile_export.jsonl as it is added, and Close writes the aggregate
// profile_export_aiperf.json and .csv computed from the same records. It is
// safe for concurrent use.
type RunWriter struct {
	mu    sync.Mutex
	dir   string
	f     *os.File
	bw    *bufio.Writer // nil when every record is written through at once
	jw    *JSONLWriter
	agg   *Aggregator
	added int
}

// RunOptions configures a RunWriter.
type RunOptions struct {
	// Buffered batches JSONL writes (the simulator); otherwise each record is
	// written to the file as soon as it is added (real runs, so an
	// interrupted run never loses a finished request).
	Buffered bool
	SLOs     []SLO
}

// CreateRun creates dir (and parents) and opens its profile_export.jsonl.
func CreateRun(dir string, opts RunOptions) (*RunWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, RecordsName))
	if err != nil {
		return nil, err
	}
	rw := &RunWriter{dir: dir, f: f, agg: NewAggregator(opts.SLOs)}
	if opts.Buffered {
		rw.bw = bufio.NewWriterSize(f, 1<<20)
		rw.jw = NewJSONLWriter(rw.bw)
	} else {
		rw.jw = NewJSONLWriter(f)
	}
	return rw, nil
}

// Dir is the run directory.
func (rw *RunWriter) Dir() string { return rw.dir }

// Add computes r's metrics, writes its JSONL line and aggregates it. It
// returns the computed metrics.
func (rw *RunWriter) Add(r *Record) (RecordMetrics, error) {
	m := ComputeMetrics(r)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if err := rw.jw.Write(&m); err != nil {
		return m, err
	}
	rw.agg.Add(&m)
	rw.added++
	return m, nil
}

// Close flushes the records and writes the aggregate files. It returns the
// profile it wrote.
func (rw *RunWriter) Close(meta RunMeta) (*Profile, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.bw != nil {
		if err := rw.bw.Flush(); err != nil {
			rw.f.Close()
			return nil, fmt.Errorf("%s: %w", rw.f.Name(), err)
		}
	}
	if err := rw.f.Close(); err != nil {
		return nil, err
	}
	p := rw.agg.Profile()
	if err := applyMeta(p, meta, rw.agg.slos); err != nil {
		return nil, err
	}
	return p, WriteProfileFiles(rw.dir, p)
}

// Discard ends a run that failed, before or after Close: it closes and
// removes its profile_export.jsonl and any aggregate file written (and the
// directory, when that leaves it empty), so no partial run is mistaken for
// a finished one.
func (rw *RunWriter) Discard() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.f.Close()
	var errs []error
	for _, name := range []string{RecordsName, ProfileJSONName, ProfileCSVName} {
		if err := os.Remove(filepath.Join(rw.dir, name)); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(rw.dir) // only when empty
	return errors.Join(errs...)
}

// applyMeta sets the profile's run facts; input_config records the SLOs
// as AIPerf does, in input.goodput.
func applyMeta(p *Profile, meta RunMeta, slos []SLO) error {
	p.BenchmarkID = meta.BenchmarkID
	p.WasCancelled = meta.WasCancelled
	if meta.SpecDecode != nil {
		p.AddSpecDecode(*meta.SpecDecode)
	}
	if meta.StartNs != 0 {
		p.StartTime = FormatTime(meta.StartNs)
	}
	if meta.EndNs != 0 {
		p.EndTime = FormatTime(meta.EndNs)
	}
	if meta.InputConfig != nil {
		ic := *meta.InputConfig
		if len(slos) > 0 {
			in := InputSection{}
			if ic.Input != nil {
				in = *ic.Input
			}
			in.Goodput = GoodputConfig(slos)
			ic.Input = &in
		}
		b, err := ic.Encode()
		if err != nil {
			return err
		}
		p.InputConfig = b
	}
	return nil
}
