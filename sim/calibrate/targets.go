package calibrate

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// DefaultMaxEvals is simbench calibrate's default --max-evals.
const DefaultMaxEvals = 32

// LoadTargets reads the real run directories (simbench's or AIPerf's) to
// fit (see LoadTarget). Runs of the same name, such as one calibration
// plan run twice into two directories, are told apart by their parent
// directory's name, else by their whole path: the names label the fit's
// rows and sim.yaml's calibration.fitted_on.
func LoadTargets(dirs []string) ([]Target, error) {
	out := make([]Target, 0, len(dirs))
	for _, dir := range dirs {
		t, err := LoadTarget(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	rename(out, dirs, func(dir string) string {
		dir = filepath.Clean(dir)
		return filepath.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir))
	})
	rename(out, dirs, filepath.Clean)
	return out, nil
}

// rename gives every target whose name another one shares the name of its
// directory by name.
func rename(ts []Target, dirs []string, name func(dir string) string) {
	n := map[string]int{}
	for _, t := range ts {
		n[t.Name]++
	}
	for i := range ts {
		if n[ts[i].Name] > 1 {
			ts[i].Name = name(dirs[i])
		}
	}
}

// WriteConfig writes the fitted configuration as a simbench sim --config
// YAML file, with only the timing model it fitted.
func WriteConfig(path string, cfg sim.Config) error {
	b, err := cfg.UsedTimingYAML()
	if err != nil {
		return err
	}
	head := "# simbench sim config written by `simbench calibrate`; use with simbench sim --config\n"
	return results.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(append([]byte(head), b...))
		return err
	})
}

// WriteText prints the fit: the model and its parameters, the calibrated
// range and, per target and statistic, the real and simulated values and
// the error.
func (r *Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "fitted %s timing on %d engine steps (residual sd %.3g ms) and %d simulations (loss %.3g):\n",
		r.Model, r.Steps, r.StepResidualMs, r.Evals, r.Loss)
	if err := r.writeLayers(w); err != nil {
		return err
	}
	rg := r.Range
	fmt.Fprintf(w, "calibrated range: ISL %d–%d, OSL %d–%d, concurrency %d–%d, batch %d–%d, prefix hit %.2f–%.2f\n",
		rg.ISL[0], rg.ISL[1], rg.OSL[0], rg.OSL[1], rg.Concurrency[0], rg.Concurrency[1], rg.Batch[0], rg.Batch[1],
		rg.PrefixHitRate[0], rg.PrefixHitRate[1])
	warning.Print(w, r.Warnings)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmetric\tstat\treal\tsim\terror %\t")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%.4f\t%+.2f\t\n", row.Target, row.Metric, row.Stat, row.Real, row.Sim, row.ErrorPct)
	}
	return tw.Flush()
}

// layerTitles say what each layer of the report holds.
var layerTitles = map[string]string{
	LayerModel:  "model: the engine's work at the device's peaks",
	LayerServer: "server: the fixed costs around the work (per step, sequence, prompt step, request)",
	LayerNoise:  "noise: what spreads the figures (step jitter, host stalls, drift, the client)",
}

// writeLayers prints the parameters layer by layer, in one table so that
// the columns line up; a layer Fit did not fit says so.
func (r *Result) writeLayers(w io.Writer) error {
	pw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, layer := range Layers {
		fmt.Fprintf(pw, "%s\n", layerTitles[layer])
		if layer == LayerNoise && !r.Noise {
			fmt.Fprintf(pw, "  %s\n", noiseNote)
			continue
		}
		n := 0
		for _, p := range r.Params {
			if p.Layer != layer {
				continue
			}
			if n == 0 {
				fmt.Fprintln(pw, "  parameter\tvalue\t± sd\tprior\tdecided by\t")
			}
			n++
			value, sd := fmt.Sprintf("%.4g", p.Value), fmt.Sprintf("± %.2g", p.SD)
			if p.NoCost {
				value, sd = "–", ""
			}
			fmt.Fprintf(pw, "  %s\t%s\t%s\t%.4g\t%s\t\n", p.Name, value, sd, p.Prior, p.Source)
		}
		if n == 0 {
			fmt.Fprintln(pw, "  none")
		}
	}
	return pw.Flush()
}
