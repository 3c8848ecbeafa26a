package tinygguf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFloat16Bits(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{-40, 0xd100},
		{0.1, 0x2e66},
		{65504, 0x7bff},
		{65520, 0x7c00},                       // rounds up to Inf
		{65519, 0x7bff},                       // rounds down
		{float32(math.Ldexp(1, -24)), 0x0001}, // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000}, // tie, even: zero
		{float32(math.Ldexp(3, -25)), 0x0002}, // tie, even: up
		{float32(math.Ldexp(1, -14)), 0x0400}, // smallest normal
		{1e-9, 0},
		{1 + 1.0/2048, 0x3c00}, // tie, even: down
		{1 + 3.0/2048, 0x3c02}, // tie, even: up
		{float32(math.Inf(1)), 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Float16Bits(tt.in), "%g", tt.in)
	}
	assert.True(t, math.IsNaN(float64(Float16From(Float16Bits(float32(math.NaN()))))))
}

func TestFloat16RoundTripAll(t *testing.T) {
	for h := range 1 << 16 {
		f := Float16From(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if got := Float16Bits(f); got != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, got)
		}
	}
	assert.Equal(t, float32(65504), Float16From(0x7bff))
	assert.Equal(t, float32(math.Ldexp(1, -24)), Float16From(0x0001))
}
