package tinygguf

import "math/rand/v2"

// Hidden channel 0 is the constant carrier (see the package comment).
const carrier = 0

func fillOnes(_ Config, _ *Vocab, _ *rand.Rand, out []float32) {
	for i := range out {
		out[i] = 1
	}
}

func fillRandom(c Config, _ *Vocab, r *rand.Rand, out []float32) {
	for i := range out {
		out[i] = float32(r.NormFloat64() * c.WeightStd)
	}
}

// fillEmbedding: random rows, each with the carrier set to 1.
func fillEmbedding(c Config, v *Vocab, r *rand.Rand, out []float32) {
	fillRandom(c, v, r, out)
	for row := 0; row < len(out); row += c.Hidden {
		out[row+carrier] = 1
	}
}

// fillNoCarrierRow zeroes output row 0 of a [in, Hidden] matrix (ne0 = in):
// the layer adds nothing to the carrier.
func fillNoCarrierRow(in int) func(Config, *Vocab, *rand.Rand, []float32) {
	return func(c Config, v *Vocab, r *rand.Rand, out []float32) {
		fillRandom(c, v, r, out)
		clear(out[carrier*in : (carrier+1)*in])
	}
}

// fillOutput: random rows whose carrier column is the token's logit bias:
// 0 for normal tokens, BlockedBias for unreachable ones, EOSBias for EOS
// when it is positive.
func fillOutput(c Config, v *Vocab, r *rand.Rand, out []float32) {
	fillRandom(c, v, r, out)
	for id := range c.Vocab {
		out[id*c.Hidden+carrier] = float32(Bias(c, v, id))
	}
}

// Bias is the logit bias (carrier column of output.weight) of token id.
func Bias(c Config, v *Vocab, id int) float64 {
	eos := c.EOSBias > 0
	switch {
	case v.Unreachable(id, eos):
		return c.BlockedBias
	case id == EOS:
		return c.EOSBias
	}
	return 0
}
