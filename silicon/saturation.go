package silicon

// holdFraction is how much of its offered rate a server must complete to
// have held a stage: below it, requests queue without bound. A real stage
// is judged on its published request throughput (over a run of ten
// minutes, its window's extra latency is under 1.5 %), a simulated one on
// its steady completion rate (Figures.CompletionRate: over a whole replay,
// within 1 % of the rate when it holds).
const holdFraction = 0.95

// Sweep is one deployment's load sweep (two or more stages): each stage's
// achieved throughput, measured and as each prediction has it, lightest
// first. The last stage is the heaviest: its error is the sweep's.
type Sweep struct {
	Deployment string            `json:"deployment"`
	Stages     []StageThroughput `json:"stages"`
}

// StageThroughput is one stage of a sweep (requests/s).
type StageThroughput struct {
	Stage string  `json:"stage"`
	Rate  float64 `json:"offered_rate"`
	// Measured is the published request throughput; absent when the stage
	// publishes none.
	Measured *float64 `json:"measured,omitempty"`
	// RealHeld: the stage is not flagged saturated and its throughput,
	// when published, reaches holdFraction of its rate.
	RealHeld  bool         `json:"real_held"`
	Predicted []Throughput `json:"predicted"`
}

// Throughput is one prediction of a stage's throughput: the simulated
// steady completion rate, its signed error % against the measured
// throughput, and whether the simulator saturates (completes less than
// holdFraction of the offered rate). A prediction that does not predict
// the stage has no value.
type Throughput struct {
	Prediction string   `json:"prediction"`
	Value      *float64 `json:"value,omitempty"`
	ErrorPct   *float64 `json:"error_pct,omitempty"`
	Saturates  bool     `json:"sim_saturates"`
	// SaturatesWhereRealHeld is the miss that matters for capacity: the
	// simulator saturates at a load the real server held.
	SaturatesWhereRealHeld bool `json:"saturates_where_real_held"`
}

// Sweeps are the load sweeps of stages: one per deployment with two or
// more stages.
func Sweeps(stages []*Stage, preds []Prediction) []Sweep {
	var out []Sweep
	for _, d := range Deployments(stages) {
		idx := stagesOf(stages, d)
		if len(idx) < 2 {
			continue
		}
		sw := Sweep{Deployment: d}
		for _, i := range idx {
			sw.Stages = append(sw.Stages, stageThroughput(stages[i], preds, i))
		}
		out = append(out, sw)
	}
	return out
}

func stageThroughput(s *Stage, preds []Prediction, i int) StageThroughput {
	rate := s.Workload.Rate
	st := StageThroughput{Stage: s.ID, Rate: rate, Measured: s.Actual.RequestThroughput, RealHeld: !s.Flags.Saturated}
	if m := st.Measured; m != nil && *m < holdFraction*rate {
		st.RealHeld = false
	}
	for _, p := range preds {
		t := Throughput{Prediction: p.Key, Value: finite(p.Figures[i].CompletionRate)}
		if t.Value != nil {
			if e, ok := errPct(t.Value, st.Measured); ok {
				t.ErrorPct = &e
			}
			t.Saturates = *t.Value < holdFraction*rate
			t.SaturatesWhereRealHeld = t.Saturates && st.RealHeld
		}
		st.Predicted = append(st.Predicted, t)
	}
	return st
}

// Heaviest is the sweep's heaviest stage.
func (s Sweep) Heaviest() StageThroughput { return s.Stages[len(s.Stages)-1] }
