package calibrate

import (
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Shares of the measured step and TTFT that the derived start assigns to
// each term before fitting. They encode what is typical of GPU serving at
// small batch: decode is bound by reading weights (a per-step cost), each
// extra sequence and each context token read add a few percent, and the
// time to first token is part prefill compute, part frontend overhead.
const (
	decodeSeqShare  = 0.02 // of the decode step, per running sequence
	contextShare    = 0.05 // of the decode step, for the average context read
	prefillTTFTPart = 0.5  // of TTFT beyond one step: prefill compute
	minShare        = 0.1  // the step's base never starts below this share of ITL
)

// Initial derives starting parameters from a real run: the decode step from
// ITL, split into a base, a per-sequence and a per-context-token part, and
// the rest of TTFT beyond one step split between prefill compute (per
// prompt token) and the frontend overhead.
func Initial(p *results.Profile, wl *traces.Workload) Params {
	itl := valueOr(p, results.TagITL, 20)
	ttft := valueOr(p, results.TagTTFT, 2*itl)
	isl := max(valueOr(p, results.TagISL, meanISL(wl)), 1)
	osl := max(valueOr(p, results.TagOSL, 100), 1)
	batch := float64(max(wl.Concurrency, 1))
	ctx := isl + osl/2

	seq := decodeSeqShare * itl
	perCtx := contextShare * itl / (ctx * batch)
	base := max(itl-batch*seq-batch*ctx*perCtx, minShare*itl)
	rest := max(ttft-base, 0.1*ttft)
	return Params{BaseMs: base, PrefillTokenMs: prefillTTFTPart * rest / isl, DecodeSeqMs: seq,
		ContextTokenMs: perCtx, OverheadMs: (1 - prefillTTFTPart) * rest}
}

func valueOr(p *results.Profile, tag string, def float64) float64 {
	if v, ok := p.Value(tag, "avg"); ok && v > 0 {
		return v
	}
	return def
}

func meanISL(wl *traces.Workload) float64 {
	if len(wl.Requests) == 0 {
		return 1
	}
	s := 0
	for _, r := range wl.Requests {
		s += r.InputLength
	}
	return float64(s) / float64(len(wl.Requests))
}
