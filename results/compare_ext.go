package results

// PooledTokenGaps returns the token_gap values the aggregator has pooled
// so far (inter_chunk_latency when no request's token gaps differed from
// its chunk gaps). The slice is the aggregator's own, not a copy: compare
// uses it after Profile, to find token-gap stalls without holding a second
// copy of tens of millions of gaps. Profile does not depend on its order.
func (a *Aggregator) PooledTokenGaps() []float64 {
	if a.split {
		return a.tokenGap
	}
	return a.icl
}
