package results

import "strconv"

// appendExtension writes the "simbench" object of a JSONL line by hand, with
// the keys and omissions of Extension's json tags: it runs once per request
// and encoding/json's reflection cost more than the rest of the line.
func appendExtension(b []byte, e *Extension) []byte {
	b = append(b, `{"trace_row":`...)
	b = strconv.AppendInt(b, int64(e.TraceRow), 10)
	b = appendOptInt(b, "intended_send_ns", e.IntendedSendNs)
	b = appendOptString(b, "worker", e.Worker)
	b = appendOptInt(b, "requested_output_tokens", int64(e.RequestedOutputTokens))
	if u := e.Usage; u != nil {
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
		b = appendOptInt(b, "reasoning_tokens", int64(u.ReasoningTokens))
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
		b = append(b, '}')
	}
	if e.Sim != nil {
		b = append(b, `,"sim":`...)
		b = appendSimDetail(b, e.Sim)
	}
	if len(e.ChunkNs) > 0 {
		b = append(b, `,"chunk_ns":[`...)
		for i, v := range e.ChunkNs {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendSimDetail(b []byte, s *SimDetail) []byte {
	b = append(b, `{"queue_wait_ns":`...)
	b = strconv.AppendInt(b, s.QueueWaitNs, 10)
	b = appendOptInt(b, "prefill_start_ns", s.PrefillStartNs)
	b = appendOptInt(b, "prefill_end_ns", s.PrefillEndNs)
	b = append(b, `,"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(s.CachedTokens), 10)
	b = append(b, `,"preemptions":`...)
	b = strconv.AppendInt(b, int64(s.Preemptions), 10)
	if len(s.TTFTBreakdown) > 0 {
		b = append(b, `,"ttft_breakdown":[`...)
		for i, st := range s.TTFTBreakdown {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"stage":`...)
			b = appendString(b, st.Name)
			b = append(b, `,"ns":`...)
			b = strconv.AppendInt(b, st.Ns, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if s.PrefillWorker != "" {
		b = append(b, `,"prefill_worker":`...)
		b = appendString(b, s.PrefillWorker)
	}
	if s.DecodeWorker != "" {
		b = append(b, `,"decode_worker":`...)
		b = appendString(b, s.DecodeWorker)
	}
	b = appendOptInt(b, "kv_transfer_start_ns", s.KVTransferStartNs)
	b = appendOptInt(b, "kv_transfer_end_ns", s.KVTransferEndNs)
	b = appendOptInt(b, "kv_transfer_bytes", s.KVTransferBytes)
	return append(b, '}')
}

func appendOptInt(b []byte, k string, v int64) []byte {
	if v == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, v, 10)
}
