package tinygguf

import "math"

// Float16Bits converts f to IEEE 754 binary16, rounding to nearest even;
// values beyond the range become ±Inf, NaN stays NaN.
func Float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	switch {
	case exp == 0xff && mant != 0:
		return sign | 0x7e00
	case exp == 0xff:
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		return sign | subnormal16(mant|0x800000, uint(14-e))
	}
	return sign | roundShift(uint32(e)<<10|mant>>13, mant&0x1fff, 0x1000)
}

// subnormal16 shifts a 24-bit significand right by shift (≥ 14) with
// round-to-nearest-even; shift > 24 underflows to zero.
func subnormal16(m uint32, shift uint) uint16 {
	if shift > 24 {
		return 0
	}
	half := uint32(1) << (shift - 1)
	return roundShift(m>>shift, m&(1<<shift-1), half)
}

// roundShift rounds the truncated value v up when the dropped bits rest
// exceed half, or equal it and v is odd. A carry into the exponent is
// correct IEEE behaviour (it may produce Inf).
func roundShift(v, rest, half uint32) uint16 {
	if rest > half || (rest == half && v&1 == 1) {
		v++
	}
	return uint16(v)
}

// Float16From converts IEEE 754 binary16 bits to float32 exactly.
func Float16From(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		v := float32(mant) / (1 << 24)
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}
