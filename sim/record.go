package sim

import (
	"strconv"

	"github.com/simbench/simbench/results"
)

// Names of the TTFT breakdown stages, in order. For every completed request
// they partition TTFT (first token at the client − send) exactly:
//
//   - frontend_request: send → arrival at the router/engine (the frontend
//     request overhead, frontend.request_overhead_ms).
//   - queue_wait: engine arrival → start of the first step that computes
//     any of its prompt (waiting for admission in the engine queue).
//   - prefill_compute: Σ over the steps computing its prompt before the
//     first token of the time its chunk would take alone in that step
//     (the timing model on a batch of just that chunk, capped at the step).
//   - waiting_behind_other_work: the rest of the time from prefill start to
//     the engine's first token: co-scheduled work in its prefill steps,
//     steps between its chunks, and preemption.
//   - first_token_emission: engine first token → client (the frontend
//     response overhead; 0 when not modelled).
//
// Routing has no stage of its own: the router decides at arrival, in zero
// virtual time, so the stage would be 0 in every record. The server
// metrics keep it (dynamo_frontend_ttft_stage_seconds{stage="route"},
// observed as 0) so the Dynamo vocabulary is complete there. SimDetail's
// QueueWaitNs is the queue_wait stage.
//
// A request prefilled on a prefill worker (disaggregated serving) has
// three more stages between waiting_behind_other_work (which then ends when
// the prefill worker has computed the last prompt token) and
// first_token_emission:
//
//   - decode_queue_wait: prefill end → admission by the decode worker (KV
//     blocks and a sequence slot; the prefill worker keeps the KV).
//   - kv_transfer: admission → the KV is on the decode worker
//     (kv_transfer.latency_ms plus the bytes at the link's share).
//   - decode_first_step: the rest until the decode worker's first token:
//     waiting for its running step to end, then the one-token step.
//
// The first three stages are the prefill worker's; the frontend's
// breakdown counts the three new ones as backend/decode.
const (
	StageFrontendRequest = "frontend_request"
	StageQueueWait       = "queue_wait"
	StagePrefill         = "prefill_compute"
	StageBehindOther     = "waiting_behind_other_work"
	StageDecodeQueue     = "decode_queue_wait"
	StageKVTransfer      = "kv_transfer"
	StageDecodeFirstStep = "decode_first_step"
	StageFirstEmission   = "first_token_emission"
)

func (s *simulator) baseRecord(r *request) *results.Record {
	src := r.src
	id := "sim-" + strconv.Itoa(int(r.wi))
	corr := id // one correlation id per session, as the load generator sends
	if src.SessionID != "" {
		corr = "sim-session-" + src.SessionID
	}
	return &results.Record{
		ID: id, SessionNum: r.pace.Seq, TraceRow: src.Row, ConversationID: src.SessionID,
		CorrelationID: corr, Turn: src.Turn, Warmup: src.Warmup,
		IntendedNs: Epoch + int64(r.pace.Intended), StartNs: Epoch + r.send, AckNs: Epoch + r.arrive,
		InputTokens: r.isl, RequestedOutputTokens: src.OutputLength,
	}
}

// record is the results record of a completed request: one chunk of one
// token per step that produced a token.
func (s *simulator) record(r *request) *results.Record {
	rec := s.baseRecord(r)
	rec.Worker = r.w.name
	rec.Chunks = r.chunks
	rec.EndNs = r.chunks[len(r.chunks)-1].AtNs
	rec.OutputTokens = r.generated
	rec.Sim = s.detail(r)
	return rec
}

func (s *simulator) detail(r *request) *results.SimDetail {
	if r.h != nil {
		return s.disaggDetail(r)
	}
	queue := r.prefillAt - r.arrive
	behind := r.firstTok - r.prefillAt - r.ownPrefill
	return &results.SimDetail{
		QueueWaitNs: queue, PrefillStartNs: Epoch + r.prefillAt, PrefillEndNs: Epoch + r.firstTok,
		CachedTokens: r.cached, Preemptions: r.preemptions,
		TTFTBreakdown: []results.Stage{
			{Name: StageFrontendRequest, Ns: r.arrive - r.send},
			{Name: StageQueueWait, Ns: queue},
			{Name: StagePrefill, Ns: r.ownPrefill},
			{Name: StageBehindOther, Ns: behind},
			{Name: StageFirstEmission, Ns: s.respOv},
		},
	}
}

// disaggDetail is the detail of a request prefilled on a prefill worker.
func (s *simulator) disaggDetail(r *request) *results.SimDetail {
	queue := r.prefillAt - r.arrive
	return &results.SimDetail{
		QueueWaitNs: queue, PrefillStartNs: Epoch + r.prefillAt, PrefillEndNs: Epoch + r.h.pDone,
		CachedTokens: r.cached, Preemptions: r.preemptions,
		TTFTBreakdown: []results.Stage{
			{Name: StageFrontendRequest, Ns: r.arrive - r.send},
			{Name: StageQueueWait, Ns: queue},
			{Name: StagePrefill, Ns: r.h.pOwn},
			{Name: StageBehindOther, Ns: r.h.pDone - r.prefillAt - r.h.pOwn},
			{Name: StageDecodeQueue, Ns: r.h.xferStart - r.h.pDone},
			{Name: StageKVTransfer, Ns: r.h.xferEnd - r.h.xferStart},
			{Name: StageDecodeFirstStep, Ns: r.firstTok - r.h.xferEnd},
			{Name: StageFirstEmission, Ns: s.respOv},
		},
		PrefillWorker: r.h.pw.name, DecodeWorker: r.w.name,
		KVTransferStartNs: Epoch + r.h.xferStart, KVTransferEndNs: Epoch + r.h.xferEnd, KVTransferBytes: r.h.xferBytes,
	}
}

func (s *simulator) rejectedRecord(r *request, reason string) *results.Record {
	rec := s.baseRecord(r)
	rec.EndNs = Epoch + s.now + s.respOv
	rec.Error = &results.ErrorDetails{Code: 400, Type: RejectedType, Message: reason}
	return rec
}
