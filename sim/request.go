package sim

import (
	"github.com/simbench/simbench/pacer"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// request is one in-flight request inside the simulator.
type request struct {
	wi     int32 // index in Workload.Requests
	src    *traces.Request
	isl    int // prompt tokens the engine computes (at least 1)
	osl    int // output tokens to generate
	hashes []uint64
	order  int64 // admission order (preemption picks by it)
	w      *worker

	computed  int // tokens whose KV is computed
	generated int // output tokens emitted

	held    []int32 // shared KV blocks (a prefix of the sequence's blocks)
	private int     // private KV blocks (the rest)
	slot    int     // llamacpp slot, -1 when none
	readyAt int64   // the first step (worker.stats.steps) that may admit it while others run (llamacpp's reuse_lag_steps, async_scheduling)
	running bool    // in its worker's running set
	gated   bool    // through frontend.hold_for_slot's gate, not finished

	cached      int // prefix-cache hit in tokens (largest over admissions)
	preemptions int

	pace       pacer.Send // Seq, Intended (virtual ns) and what Complete needs
	send       int64
	arrive     int64 // at the router/engine
	started    bool
	prefillAt  int64 // start of the first step computing its prompt
	firstTok   int64 // engine time of the first token
	ownPrefill int64 // Σ standalone compute of its prompt chunks before the first token

	chunks []results.Chunk

	kv       kvState  // where the prompt's KV is (disaggregated serving)
	remoteKV bool     // its prompt KV came from a prefill worker: its first step here is a decode
	h        *handoff // prefilled on a prefill worker: its part and the KV transfer; nil otherwise
}

// handoff is a disaggregated request's prefill-side state and its KV
// transfer. The KV moves once the decode worker has admitted the request
// (allocated its blocks, as vLLM's NIXL connector does), and the prefill
// worker's blocks stay held until the transfer ends.
type handoff struct {
	pw        *worker // prefill worker
	dw        *worker // decode worker chosen at arrival (conditional disaggregation), else nil
	pHeld     []int32 // the prefill worker's shared blocks, until the transfer ends
	pPrivate  int     // and private ones
	pOwn      int64   // ownPrefill when the prefill ended
	pDone     int64   // engine time the prefill worker computed the last prompt token
	xferStart int64   // the decode worker admitted it: the transfer starts
	xferEnd   int64   // the KV is on the decode worker
	xferBytes int64
}

// kvState is where a disaggregated request's prompt KV is.
type kvState uint8

const (
	kvLocal   kvState = iota // computed by the worker serving it (aggregated, or local prefill)
	kvPrefill                // being computed on the prefill worker
	kvWaiting                // computed; waiting for the decode worker to admit it
	kvMoving                 // admitted by the decode worker; moving
	kvArrived                // on the decode worker
)

// known is the number of tokens of the sequence so far: prompt plus output.
func (r *request) known() int { return r.isl + r.generated }

// remaining is the number of known tokens whose KV is not computed yet.
func (r *request) remaining() int { return r.known() - r.computed }

// blocks is the number of KV blocks the request holds.
func (r *request) blocks() int { return len(r.held) + r.private }

// decoding reports whether the request's next step is a one-token decode.
func (r *request) decoding() bool { return (r.generated > 0 || r.remoteKV) && r.remaining() == 1 }

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// deque is a FIFO with cheap push-front (preempted requests go back first).
type deque struct {
	buf        []*request
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) at(i int) *request { return d.buf[(d.head+i)%len(d.buf)] }

func (d *deque) front() *request { return d.buf[d.head] }

func (d *deque) grow() {
	if d.size < len(d.buf) {
		return
	}
	nb := make([]*request, max(8, 2*len(d.buf)))
	for i := range d.size {
		nb[i] = d.at(i)
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushBack(r *request) {
	d.grow()
	d.buf[(d.head+d.size)%len(d.buf)] = r
	d.size++
}

func (d *deque) pushFront(r *request) {
	d.grow()
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = r
	d.size++
}

func (d *deque) popFront() *request {
	r := d.buf[d.head]
	d.buf[d.head] = nil
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return r
}
