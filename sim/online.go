package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/simbench/simbench/pacer"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Listener hears what happens to one request submitted to an Online
// simulator. Its methods run inside Submit or AdvanceTo, on the caller's
// goroutine, and must not call back into the simulator.
type Listener interface {
	// Token is the request's next output token, reaching the client at
	// virtual time atNs (ns since the simulator's start; frontend.
	// response_overhead_ms after the engine emitted it, so it may be later
	// than the time AdvanceTo was given).
	Token(atNs int64)
	// Done is the request's record once it has finished: completed, or
	// rejected (rec.Error set, type RejectedType). Times are Epoch plus
	// virtual time. It comes after the request's last Token.
	Done(rec *results.Record)
}

// Online is the simulator with requests submitted while it runs, for a
// server: the caller holds virtual time to its own clock, submitting each
// request at the time it arrives and advancing the agenda to the present.
// The event loop is the one Run uses; requests skip the pacer (each is sent
// when submitted) and the client model (client gaps and stalls only delay
// the release of a finished request's slot, which nothing waits on). The
// server metrics (with server_metrics.enabled) are the families Run
// exposes, gathered on demand (Metrics) instead of scraped; progress is not
// kept. An Online is not safe for concurrent use.
type Online struct {
	s         *simulator
	listeners []Listener // by request index; nil once done
	// kick is owed when requests were sent at the present: the step
	// starts that end Run's instant come after all its sends.
	kick bool
}

// NewOnline is an online simulator of the cluster cfg describes, at virtual
// time 0.
func NewOnline(cfg Config) (*Online, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := &Online{}
	s, err := build(cfg, &traces.Workload{}, nil, o.done, nil)
	if err != nil {
		return nil, err
	}
	s.onToken = o.token
	if cfg.ServerMetrics.Enabled {
		s.metrics = newServerMetrics(s, nil)
	}
	o.s = s
	return o, nil
}

// Metrics gathers the simulated servers' Prometheus families at the
// present (nil without server_metrics.enabled): Dynamo's frontend and every
// worker's engine families, as Run's scrapes see them, each worker's
// series labelled worker="NAME" so that the workers' series stay apart in
// one exposition. Families are sorted by name.
func (o *Online) Metrics() ([]*dto.MetricFamily, error) {
	m := o.s.metrics
	if m == nil {
		return nil, nil
	}
	byName := map[string]*dto.MetricFamily{}
	var names []string
	for i, e := range m.eps {
		mfs, err := e.gather()
		if err != nil {
			return nil, fmt.Errorf("sim: server metrics: %s: %w", e.url, err)
		}
		for _, mf := range mfs {
			if i > 0 {
				labelWorker(mf, o.s.workers[i-1].name)
			}
			if have := byName[mf.GetName()]; have != nil {
				have.Metric = append(have.Metric, mf.Metric...)
				continue
			}
			byName[mf.GetName()] = mf
			names = append(names, mf.GetName())
		}
	}
	slices.Sort(names)
	out := make([]*dto.MetricFamily, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out, nil
}

// labelWorker adds worker="name" to every series of mf, the labels kept
// sorted as client_golang keeps them.
func labelWorker(mf *dto.MetricFamily, name string) {
	for _, mt := range mf.Metric {
		k, v := "worker", name
		lp := &dto.LabelPair{Name: &k, Value: &v}
		i, _ := slices.BinarySearchFunc(mt.Label, "worker", func(l *dto.LabelPair, k string) int { return strings.Compare(l.GetName(), k) })
		mt.Label = slices.Insert(mt.Label, i, lp)
	}
}

// Now is the virtual time the simulator has reached.
func (o *Online) Now() int64 { return o.s.now }

// Next is the time of the next event on the agenda, if any (the present
// when step starts are owed).
func (o *Online) Next() (int64, bool) {
	if o.kick {
		return o.s.now, true
	}
	if o.s.events.len() == 0 {
		return 0, false
	}
	return o.s.events.peek().t, true
}

// AdvanceTo runs every event due at or before t, then holds virtual time
// at t (a time already passed leaves it where it is).
func (o *Online) AdvanceTo(t int64) error {
	s := o.s
	o.kickOwed()
	for s.events.len() > 0 && s.events.peek().t <= t {
		if err := s.instant(); err != nil {
			return err
		}
	}
	s.now = max(s.now, t)
	return nil
}

// before runs every event due before t and then those at t, without the
// step starts that end the instant: the sends at t come first, as in Run.
func (o *Online) before(t int64) error {
	s := o.s
	o.kickOwed()
	for s.events.len() > 0 && s.events.peek().t < t {
		if err := s.instant(); err != nil {
			return err
		}
	}
	o.kick = true
	return s.handleAt(t)
}

func (o *Online) kickOwed() {
	if o.kick {
		o.kick = false
		o.s.kick()
	}
}

// Submit advances to t and sends req at it (at the present when t has
// passed); requests submitted at one time join the engines' queues before
// any step starts at it, as Run's sends of one instant do. l hears of its tokens and its end. req needs InputLength and
// OutputLength; its Row is set to the request's index, which Submit
// returns and the records carry as TraceRow (their ID is "sim-" and it).
func (o *Online) Submit(t int64, req traces.Request, l Listener) (int, error) {
	if l == nil {
		return 0, errors.New("sim: Submit without a listener")
	}
	if req.InputLength <= 0 && req.TextInput == "" {
		return 0, fmt.Errorf("sim: request without a prompt length (input_length %d)", req.InputLength)
	}
	s := o.s
	if t > s.now || s.events.len() > 0 && s.events.peek().t <= t {
		if err := o.before(max(t, s.now)); err != nil {
			return 0, err
		}
	}
	idx := len(s.wl.Requests)
	req.Row = idx
	s.wl.Requests = append(s.wl.Requests, req)
	s.live = append(s.live, nil)
	o.listeners = append(o.listeners, l)
	at := time.Duration(s.now)
	s.send(pacer.Send{Seq: idx, Req: idx, At: at, Intended: at, Warmup: req.Warmup})
	o.kick = true
	return idx, s.err
}

func (o *Online) token(wi int32, atNs int64) { o.listeners[wi].Token(atNs) }

func (o *Online) done(rec *results.Record) error {
	l := o.listeners[rec.TraceRow]
	o.listeners[rec.TraceRow] = nil
	l.Done(rec)
	return nil
}
