package serve

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// engine is the online simulator held to the wall clock: virtual time is
// the wall time since start times speedup. Requests enter it when they
// arrive (submit); run advances it to the present whenever its next event
// is due, and the listeners hear of tokens then.
type engine struct {
	mu      sync.Mutex // guards on
	on      *sim.Online
	start   time.Time
	speedup float64
	now     func() time.Time
	wake    chan struct{} // a request came: the next event may be sooner
}

func newEngine(cfg sim.Config, speedup float64, now func() time.Time) (*engine, error) {
	if !(speedup > 0) || math.IsInf(speedup, 0) {
		return nil, fmt.Errorf("serve: speedup %v: want a finite number > 0", speedup)
	}
	on, err := sim.NewOnline(cfg)
	if err != nil {
		return nil, err
	}
	return &engine{on: on, start: now(), speedup: speedup, now: now, wake: make(chan struct{}, 1)}, nil
}

// virtual is the virtual time of wall time t (ns since start × speedup).
func (e *engine) virtual(t time.Time) int64 {
	return int64(math.Round(float64(t.Sub(e.start)) * e.speedup))
}

// wall is the wall time of virtual time v, rounded up so that virtual
// time at it has reached v.
func (e *engine) wall(v int64) time.Time {
	return e.start.Add(time.Duration(math.Ceil(float64(v) / e.speedup)))
}

// submit sends req into the simulator now; l hears of its tokens and end
// (inside submit too, when the simulator rejects it at once).
func (e *engine) submit(req traces.Request, l sim.Listener) error {
	e.mu.Lock()
	_, err := e.on.Submit(e.virtual(e.now()), req, l)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return err
}

// metrics gathers the simulated servers' families at the present, the
// simulator first advanced to it.
func (e *engine) metrics() ([]*dto.MetricFamily, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.on.AdvanceTo(e.virtual(e.now())); err != nil {
		return nil, fmt.Errorf("serve: simulator: %w", err)
	}
	return e.on.Metrics()
}

// step advances the simulator to the present and says when its next event
// is due (ok false: none).
func (e *engine) step() (next time.Time, ok bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.on.AdvanceTo(e.virtual(e.now())); err != nil {
		return time.Time{}, false, fmt.Errorf("serve: simulator: %w", err)
	}
	v, ok := e.on.Next()
	return e.wall(v), ok, nil
}

// run keeps the simulator at the wall clock until ctx is done.
func (e *engine) run(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, ok, err := e.step()
		if err != nil {
			return err
		}
		wait := time.Hour
		if ok {
			wait = next.Sub(e.now())
		}
		if wait <= 0 {
			continue
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-e.wake:
		case <-timer.C:
		}
	}
}
