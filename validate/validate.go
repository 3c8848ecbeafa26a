package validate

import (
	"context"
	"errors"
	"fmt"
	"github.com/simbench/simbench/internal/warning"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/sim"
)

// Options configure a validation; the hooks are the caller's presentation
// of progress and interrupts.
type Options struct {
	Out     string // artifacts directory (required)
	History string // history JSONL; "" = history.path, else OUT/history.jsonl
	URL     string // overrides target.url when set
	Quiet   bool   // no step lines, notes or progress on Log
	Log     io.Writer
	Now     func() time.Time // default time.Now

	// RunProgress, when set and not Quiet, renders a silicon run's progress.
	RunProgress func() (func(loadgen.Progress), time.Duration)
	// SimProgress, when set and not Quiet, renders a simulated run's progress
	// (total requests); done is called when the run ends. A nil option is none.
	SimProgress func(total int) (opt sim.Option, done func())
	// Interrupt, when set, derives the context of each silicon run (e.g.
	// cancelled by Ctrl-C, so the run stops and still writes its files).
	Interrupt func(context.Context) (context.Context, func())

	// Real and Sim, when set, replace the silicon arm (the target) and the
	// simulated arm (the simulator) of a validation of runs: a test's
	// fake arms. Load sweeps always run on the target and the simulator.
	Real, Sim Arm
}

// Arm writes one run of an arm into dir: a run directory as simbench run
// or simbench sim writes it, its report on log. seed, when not nil, is
// the simulator's seed of a repeated simulated run.
type Arm interface {
	Run(ctx context.Context, dir string, seed *int64, log io.Writer) error
}

// armFunc is a function as an Arm.
type armFunc func(ctx context.Context, dir string, seed *int64, log io.Writer) error

// Run calls f.
func (f armFunc) Run(ctx context.Context, dir string, seed *int64, log io.Writer) error {
	return f(ctx, dir, seed, log)
}

// validation is one execution of a pipeline.
type validation struct {
	p       *Pipeline
	opts    Options
	out     string
	history string
	prompts *loadgen.Prompts // the runs' prompts, with target.tokenizer loaded
	// staged maps an arm directory's name (real, sim, warmup) to its
	// staging directory while the arms run (see writeArms).
	staged map[string]string
}

// Run checks the pipeline's local inputs (a usage error writes nothing and
// sends nothing), executes its steps and appends the validation's line to
// the history, also when a step failed (its error is then returned). The
// Outcome holds the verdicts, the files written and the history entry.
func Run(ctx context.Context, p *Pipeline, opts Options) (*Outcome, error) {
	v := newValidation(p, opts)
	if err := v.preflight(); err != nil {
		return nil, err // the pipeline's own mistake: nothing written, nothing sent
	}
	start := v.opts.Now()
	res, runErr := v.execute(ctx)
	entry := v.historyEntry(start, res, runErr)
	if err := AppendHistory(v.history, entry); err != nil {
		return nil, errors.Join(runErr, fmt.Errorf("history: %w", err))
	}
	if runErr != nil {
		return nil, runErr
	}
	res.Entry, res.HistoryPath = entry, v.history
	return res, nil
}

func newValidation(p *Pipeline, opts Options) *validation {
	if opts.URL != "" {
		p.Target.URL = opts.URL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	v := &validation{p: p, opts: opts, out: opts.Out, history: opts.History}
	if v.opts.Real == nil {
		v.opts.Real = armFunc(func(ctx context.Context, dir string, _ *int64, log io.Writer) error { return v.realRun(ctx, dir, log) })
	}
	if v.opts.Sim == nil {
		v.opts.Sim = armFunc(func(_ context.Context, dir string, seed *int64, log io.Writer) error { return v.simRun(dir, seed, log) })
	}
	if v.history == "" {
		v.history = p.Resolve(p.History.Path)
	}
	if v.history == "" {
		v.history = DefaultHistoryPath(opts.Out)
	}
	return v
}

// execute runs the steps up to the comparison's artifacts.
func (v *validation) execute(ctx context.Context) (*Outcome, error) {
	if err := os.MkdirAll(v.out, 0o755); err != nil {
		return nil, err
	}
	v.logf("pipeline %s (config digest %s) → %s", v.p.path, v.p.digest[:12], v.out)
	if err := v.healthCheck(ctx); err != nil {
		return nil, err
	}
	if err := v.prepareSimConfig(ctx); err != nil {
		return nil, err
	}
	if v.p.Sweep != nil {
		if err := v.runSweeps(ctx); err != nil {
			return nil, err
		}
		return v.compareSweeps()
	}
	if err := v.runArms(ctx); err != nil {
		return nil, err
	}
	return v.compareArms()
}

// logf prints a step line on the log unless Quiet.
func (v *validation) logf(format string, args ...any) {
	if !v.opts.Quiet {
		fmt.Fprintf(v.opts.Log, "validate: "+format+"\n", args...)
	}
}

// warn prints warnings on the log, also when Quiet, as simbench does.
func (v *validation) warn(ws []error) { warning.Print(v.opts.Log, ws) }

// writeLog writes a step's report into OUTPUT/logs/NAME.txt.
func (v *validation) writeLog(name string, write func(io.Writer) error) error {
	return writeReport(filepath.Join(v.out, "logs", name+".txt"), write)
}

// writeReport writes a step's report into path, making its directory: a
// log the step streams into while it runs, so it is not written atomically
// (a failed step leaves what it had said).
func writeReport(path string, write func(io.Writer) error) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return write(f)
}
