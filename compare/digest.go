package compare

import (
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// joinTags are the per-request metrics a Digest keeps for the request join
// and the CDF plots; ISL and OSL also detect mismatched token counts.
var joinTags = []string{results.TagTTFT, results.TagTTST, results.TagITL, results.TagRequestLatency,
	results.TagOTPU, results.TagOSL, results.TagISL}

const numJoin = 7

// fineBinNs is the resolution at which time series are accumulated while
// streaming, before the run's start is known; they are regrouped into 1 s
// bins from the start afterwards, so a value lands at most 100 ms off.
const fineBinNs = int64(100_000_000)

// Request is what a Digest keeps of one valid request.
type Request struct {
	TraceRow   int32 // -1 when unknown
	SessionNum int32
	Turn       int32
	Worker     int32 // index into Digest.Workers; -1 when unknown
	// Prefill is the worker that computed the prompt: the prefill worker of
	// a disaggregated simulated run, else Worker.
	Prefill     int32
	Correlation string
	StartNs     int64
	FirstNs     int64 // first content chunk; 0 when none
	vals        [numJoin]float64
	has         uint8
}

// Value returns one of the joinTags metrics of the request.
func (r *Request) Value(tag string) (float64, bool) {
	i := slices.Index(joinTags, tag)
	if i < 0 || r.has&(1<<i) == 0 {
		return 0, false
	}
	return r.vals[i], true
}

// gapEvent is a chunk gap above the stall floor: a stall candidate.
type gapEvent struct {
	EndNs  int64 // arrival of the chunk that ended the gap
	GapMs  float64
	Worker int32
}

type timeBin struct {
	tokens float64
	gapMax float64
	gapSum float64
	gaps   int
}

// Digest is what a comparison keeps of a run's per-request records: one
// compact row per valid request, the pooled token gaps, the gaps above the
// stall floor with their times, and 100 ms time bins. Whole records are
// never kept, so a million-request file streams in bounded memory.
type Digest struct {
	Name      string
	Requests  []Request
	Errors    int       // failed requests (excluded from everything else)
	TokenGaps []float64 // pooled token_gap values (ms), sorted ascending
	Workers   []string
	OriginNs  int64 // earliest request start: time zero of every series
	EndNs     int64 // latest last-chunk time

	events    []gapEvent
	bins      map[int64]*timeBin
	workerIdx map[string]int32
	opts      StallOptions
	lastKey   int64
	lastBin   *timeBin
	poolGaps  bool    // false when an aggregator pools the same token gaps
	chunkBuf  []int64 // the current record's chunk times, reused
}

func newDigest(name string, opts StallOptions) *Digest {
	return &Digest{Name: name, bins: map[int64]*timeBin{}, workerIdx: map[string]int32{},
		opts: opts, poolGaps: true, OriginNs: 1<<63 - 1, EndNs: -1 << 63, lastKey: -1 << 63}
}

// add digests one record. Warmup records are ignored and failed ones only
// counted, as in AIPerf's aggregates.
func (d *Digest) add(m *results.RecordMetrics) {
	if m.Meta.BenchmarkPhase == "warmup" {
		return
	}
	if m.Error != nil {
		d.Errors++
		return
	}
	req := d.request(m)
	d.chunkBuf = m.AppendChunkTimesNs(d.chunkBuf[:0])
	ct := d.chunkBuf
	if len(ct) > 0 {
		req.FirstNs = ct[0]
	}
	end := req.StartNs
	if lat, ok := m.Get(results.TagRequestLatency); ok {
		end += msToNs(lat)
	}
	d.OriginNs = min(d.OriginNs, req.StartNs)
	d.EndNs = max(d.EndNs, end)
	if d.poolGaps {
		d.TokenGaps = append(d.TokenGaps, m.TokenGaps()...)
	}
	d.addGaps(m.ICL, ct, req.Worker)
	osl, _ := m.Get(results.TagOSL)
	d.addTokens(m, ct, osl, end)
	d.Requests = append(d.Requests, req)
}

func (d *Digest) request(m *results.RecordMetrics) Request {
	req := Request{TraceRow: -1, SessionNum: int32(m.Meta.SessionNum), Turn: int32(m.Meta.TurnIndex),
		Correlation: m.Meta.XCorrelationID, StartNs: m.Meta.RequestStartNs, Worker: d.worker(servingWorker(m))}
	if m.Ext != nil && m.Ext.TraceRow >= 0 {
		req.TraceRow = int32(m.Ext.TraceRow)
	}
	req.Prefill = req.Worker
	if m.Ext != nil && m.Ext.Sim != nil && m.Ext.Sim.PrefillWorker != "" && req.Worker >= 0 {
		req.Prefill = d.worker(m.Ext.Sim.PrefillWorker)
	}
	for i, tag := range joinTags {
		if v, ok := m.Get(tag); ok {
			req.vals[i] = v
			req.has |= 1 << i
		}
	}
	return req
}

// servingWorker is the worker that served the request, "" when unknown.
// simbench writes it in its extension. AIPerf's metadata.worker_id names
// AIPerf's own client worker process ("worker_<hex>") and simbench writes
// "simbench" there when the worker is unknown; neither says where the
// request ran, so only other values of metadata.worker_id are used.
func servingWorker(m *results.RecordMetrics) string {
	if m.Ext != nil && m.Ext.Worker != "" {
		return m.Ext.Worker
	}
	w := m.Meta.WorkerID
	if w == "simbench" || strings.HasPrefix(w, "worker_") {
		return ""
	}
	return w
}

func (d *Digest) worker(name string) int32 {
	if name == "" {
		return -1
	}
	if i, ok := d.workerIdx[name]; ok {
		return i
	}
	i := int32(len(d.Workers))
	d.Workers = append(d.Workers, name)
	d.workerIdx[name] = i
	return i
}

// addGaps bins every chunk gap at the arrival of the chunk that ends it and
// keeps those above the stall floor as stall candidates. A token gap that
// is not zero is always one of these chunk gaps (results.chunkGaps), so the
// stalls found among them are exactly the stalls of the token gaps.
func (d *Digest) addGaps(icl []float64, ct []int64, worker int32) {
	if len(ct) != len(icl)+1 {
		return
	}
	for i, g := range icl {
		at := ct[i+1]
		b := d.bin(at)
		b.gapMax = max(b.gapMax, g)
		b.gapSum += g
		b.gaps++
		if g > d.opts.FloorMs {
			d.events = append(d.events, gapEvent{EndNs: at, GapMs: g, Worker: worker})
		}
	}
}

// bin returns the 100 ms bin holding wall time t.
func (d *Digest) bin(t int64) *timeBin {
	k := floorDiv(t, fineBinNs)
	if k == d.lastKey {
		return d.lastBin
	}
	b := d.bins[k]
	if b == nil {
		b = &timeBin{}
		d.bins[k] = b
	}
	d.lastKey, d.lastBin = k, b
	return b
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// finish sorts the pooled gaps once every record is in.
func (d *Digest) finish() {
	slices.Sort(d.TokenGaps)
	if len(d.Requests) == 0 {
		d.OriginNs, d.EndNs = 0, 0
	}
}

// Values returns one per-request metric of every request that has it, in
// record order.
func (d *Digest) Values(tag string) []float64 {
	out := make([]float64, 0, len(d.Requests))
	for i := range d.Requests {
		if v, ok := d.Requests[i].Value(tag); ok {
			out = append(out, v)
		}
	}
	return out
}
