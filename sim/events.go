package sim

type eventKind uint8

const (
	evWake         eventKind = iota // the pacer's next send is due
	evArrive                        // a sent request reaches the frontend (arg: request index)
	evStepEnd                       // a worker's step ends (arg: worker)
	evClientDone                    // the client received a request's last byte (arg: request index)
	evTransferJoin                  // a KV transfer's latency is over: its bytes join the shared link (arg: request index)
	evTransferEnd                   // a KV transfer without contention ends (arg: request index)
	evLinkDone                      // the shared link's next transfer may be done (arg: the link's generation)
	evFrontend                      // the frontend's own event (arg: its own; the event loop's generation)
	evKVLoaded                      // a load of offloaded KV blocks ends (arg: request index)
)

// event is one entry of the simulator's agenda. Events at the same time run
// in the order they were scheduled (seq), which makes runs deterministic.
type event struct {
	t    int64
	seq  uint64
	arg  int32
	kind eventKind
}

func (a *event) before(b *event) bool {
	return a.t < b.t || a.t == b.t && a.seq < b.seq
}

// eventHeap is a binary min-heap of events by (t, seq).
type eventHeap struct {
	items []event
	seq   uint64
}

func (h *eventHeap) len() int { return len(h.items) }

func (h *eventHeap) peek() *event { return &h.items[0] }

func (h *eventHeap) push(t int64, kind eventKind, arg int32) {
	h.seq++
	h.items = append(h.items, event{t: t, seq: h.seq, arg: arg, kind: kind})
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.items[i].before(&h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && h.items[r].before(&h.items[l]) {
			m = r
		}
		if !h.items[m].before(&h.items[i]) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}
