package silicon

import (
	"context"
	"math"
	"slices"

	"github.com/simbench/simbench/sim"
)

// Report is the fidelity report of a set of stages: every prediction's
// median errors, every stage's measured and predicted figures, what the
// calibrated prediction was calibrated on, and the load sweeps'
// throughput. It is what `simbench fidelity` prints (text, markdown) and
// writes (JSON); latencies are in ms, throughputs in requests/s.
type Report struct {
	Stages      int `json:"stages"`
	Deployments int `json:"deployments"`
	// MaxRequests is the measured requests per replayed stage; 0: every
	// request, as the real run.
	MaxRequests int                 `json:"max_requests"`
	Predictions []PredictionSummary `json:"predictions"`
	// Calibrated is every prediction's medians over the stages the
	// calibrated prediction predicts (each sweep's heavier stages): the
	// a-priori and calibrated errors on the same stages.
	Calibrated  []PredictionSummary `json:"on_calibrated_stages,omitempty"`
	StageErrors []StageRow          `json:"stage_errors"`
	Calibration []Calibration       `json:"calibration"`
	Sweeps      []Sweep             `json:"throughput"`
}

// PredictionSummary is one prediction's median absolute errors, per metric
// and per metric family.
type PredictionSummary struct {
	Key      string   `json:"key"`
	Name     string   `json:"name"`
	Stages   int      `json:"stages_predicted"`
	Metrics  []Median `json:"median_abs_error_pct"`
	Families []Median `json:"family_median_abs_error_pct"`
}

// StageRow is one stage: each metric measured and as each prediction has it.
type StageRow struct {
	Stage      string      `json:"stage"`
	Deployment string      `json:"deployment"`
	Rate       float64     `json:"rate"`
	Metrics    []MetricRow `json:"metrics"`
}

// MetricRow is one metric of a stage (ms). A value missing on one side is
// absent, and so is its error.
type MetricRow struct {
	Metric    string   `json:"metric"`
	Measured  *float64 `json:"measured,omitempty"`
	Predicted []Value  `json:"predicted"`
}

// Value is one prediction's value and its signed error % against the
// measured one ((sim − real)/real × 100).
type Value struct {
	Prediction string   `json:"prediction"`
	Value      *float64 `json:"value,omitempty"`
	ErrorPct   *float64 `json:"error_pct,omitempty"`
}

// Options are a fidelity run's knobs.
type Options struct {
	// MaxRequests caps the measured requests of every replay (Replay); 0
	// replays every request.
	MaxRequests int
	// Seeds is the calibration's simulator seeds (calibrate.Options.Seeds;
	// 0 is its default).
	Seeds int
	// MaxEvals caps the calibration's simulator runs that fit the frontend
	// overhead (calibrate.Options.MaxEvals; 0 is its default).
	MaxEvals int
}

// Run predicts stages every way the report shows: the default prior a
// priori (leave-one-deployment-out) and in-sample, and calibrated on each
// deployment's lightest stage.
func Run(ctx context.Context, stages []*Stage, opt Options) (*Report, error) {
	preds, err := Predictions(ctx, stages, opt.MaxRequests)
	if err != nil {
		return nil, err
	}
	cal, cals, err := Calibrated(ctx, stages, sim.DefaultConfig(), aPriori, opt)
	if err != nil {
		return nil, err
	}
	return NewReport(stages, append(preds, cal), cals, opt.MaxRequests), nil
}

// NewReport tabulates preds of stages.
func NewReport(stages []*Stage, preds []Prediction, cals []Calibration, maxRequests int) *Report {
	r := &Report{Stages: len(stages), Deployments: len(Deployments(stages)), MaxRequests: maxRequests,
		Calibration: cals, Sweeps: Sweeps(stages, preds)}
	for _, p := range preds {
		r.Predictions = append(r.Predictions, summarize(stages, p))
	}
	if i := slices.IndexFunc(preds, func(p Prediction) bool { return p.Key == calibratedKey }); i >= 0 {
		if sub, subPreds := predictedBy(stages, preds, i); len(sub) > 0 {
			for _, p := range subPreds {
				r.Calibrated = append(r.Calibrated, summarize(sub, p))
			}
		}
	}
	for i, s := range stages {
		row := StageRow{Stage: s.ID, Deployment: s.Deployment, Rate: s.Workload.Rate}
		for _, met := range ReportMetrics {
			mr := MetricRow{Metric: met.Key(), Measured: met.Get(s.Actual)}
			for _, p := range preds {
				v := Value{Prediction: p.Key, Value: finite(met.Get(p.Figures[i]))}
				if e, ok := errPct(v.Value, mr.Measured); ok {
					v.ErrorPct = &e
				}
				mr.Predicted = append(mr.Predicted, v)
			}
			row.Metrics = append(row.Metrics, mr)
		}
		r.StageErrors = append(r.StageErrors, row)
	}
	return r
}

// summarize is p's medians over stages.
func summarize(stages []*Stage, p Prediction) PredictionSummary {
	n := 0
	for _, f := range p.Figures {
		if f != (Figures{}) {
			n++
		}
	}
	return PredictionSummary{Key: p.Key, Name: p.Name, Stages: n,
		Metrics: MedianAbsErrors(stages, p), Families: FamilyMedians(stages, p)}
}

// predictedBy are the stages that prediction k predicts, and every
// prediction of those stages.
func predictedBy(stages []*Stage, preds []Prediction, k int) ([]*Stage, []Prediction) {
	var sub []*Stage
	out := make([]Prediction, len(preds))
	for j, p := range preds {
		out[j] = Prediction{Name: p.Name, Key: p.Key}
	}
	for i, s := range stages {
		if preds[k].Figures[i] == (Figures{}) {
			continue
		}
		sub = append(sub, s)
		for j, p := range preds {
			out[j].Figures = append(out[j].Figures, p.Figures[i])
		}
	}
	return sub, out
}

// finite is v, or nil when v is NaN or infinite: a report holds no
// non-finite number.
func finite(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}
