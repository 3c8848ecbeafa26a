package tinygguf

import "strconv"

// GGUF v3 container: header, key/value metadata, tensor infos, then the
// tensor data section, every tensor at an offset aligned to Alignment.
// All integers are little-endian.

// Magic starts every GGUF file.
const Magic = "GGUF"

// Version is the GGUF version written.
const Version = 3

// Alignment of the tensor data section and of every tensor in it (bytes);
// written as general.alignment.
const Alignment = 32

// ValueType is a GGUF metadata value type.
type ValueType uint32

// GGUF metadata value types.
const (
	TypeUint8 ValueType = iota
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeFloat32
	TypeBool
	TypeString
	TypeArray
	TypeUint64
	TypeInt64
	TypeFloat64
)

// TensorType is a ggml tensor element type. Only the two plain float types
// are written.
type TensorType uint32

// ggml tensor types written by this package.
const (
	F32 TensorType = 0
	F16 TensorType = 1
)

// ElemSize is the size in bytes of one element.
func (t TensorType) ElemSize() uint64 {
	if t == F16 {
		return 2
	}
	return 4
}

func (t TensorType) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// KV is one metadata entry. Value holds one of uint8, int8, uint16, int16,
// uint32, int32, float32, bool, string, uint64, int64, float64, or a slice
// of one of those (an array).
type KV struct {
	Key   string
	Value any
}

// TensorInfo describes one tensor: Shape lists dimensions ne0 first (ne0 is
// the contiguous one, so a [E, V] matrix is V rows of E values), Offset is
// relative to the start of the data section.
type TensorInfo struct {
	Name   string
	Shape  []uint64
	Type   TensorType
	Offset uint64
}

// Elements is the number of values in the tensor.
func (t TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Size is the tensor's data size in bytes.
func (t TensorInfo) Size() uint64 { return t.Elements() * t.Type.ElemSize() }

// alignUp rounds n up to a multiple of Alignment.
func alignUp(n uint64) uint64 {
	return (n + Alignment - 1) / Alignment * Alignment
}
