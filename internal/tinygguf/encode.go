package tinygguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// encoder writes little-endian GGUF values and counts the bytes written.
type encoder struct {
	w   *bufio.Writer
	n   int64
	buf [8]byte
}

func newEncoder(w io.Writer) *encoder { return &encoder{w: bufio.NewWriterSize(w, 1<<16)} }

func (e *encoder) bytes(b []byte) {
	m, _ := e.w.Write(b) // a bufio.Writer keeps the first error for Flush
	e.n += int64(m)
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], v)
	e.bytes(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.bytes(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	m, _ := e.w.WriteString(s)
	e.n += int64(m)
}

func (e *encoder) pad() {
	var zero [Alignment]byte
	e.bytes(zero[:alignUp(uint64(e.n))-uint64(e.n)])
}

// kv writes one metadata entry.
func (e *encoder) kv(kv KV) error {
	t, err := valueType(kv.Value)
	if err != nil {
		return fmt.Errorf("metadata %q: %w", kv.Key, err)
	}
	e.str(kv.Key)
	e.u32(uint32(t))
	e.value(kv.Value)
	return nil
}

// value writes a value whose type valueType accepted.
func (e *encoder) value(v any) {
	switch x := v.(type) {
	case []string:
		e.array(TypeString, len(x), func(i int) { e.str(x[i]) })
	case []float32:
		e.array(TypeFloat32, len(x), func(i int) { e.u32(math.Float32bits(x[i])) })
	case []int32:
		e.array(TypeInt32, len(x), func(i int) { e.u32(uint32(x[i])) })
	case []uint32:
		e.array(TypeUint32, len(x), func(i int) { e.u32(x[i]) })
	case string:
		e.str(x)
	default:
		e.scalar(v)
	}
}

func (e *encoder) array(t ValueType, n int, each func(int)) {
	e.u32(uint32(t))
	e.u64(uint64(n))
	for i := range n {
		each(i)
	}
}

func (e *encoder) scalar(v any) {
	switch x := v.(type) {
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		e.bytes([]byte{b})
	case uint8:
		e.bytes([]byte{x})
	case int8:
		e.bytes([]byte{byte(x)})
	case uint16:
		e.bytes(binary.LittleEndian.AppendUint16(nil, x))
	case int16:
		e.bytes(binary.LittleEndian.AppendUint16(nil, uint16(x)))
	default:
		e.scalar32or64(v)
	}
}

func (e *encoder) scalar32or64(v any) {
	switch x := v.(type) {
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	}
}

// valueType maps a Go value to its GGUF type; arrays report TypeArray.
func valueType(v any) (ValueType, error) {
	switch v.(type) {
	case uint8:
		return TypeUint8, nil
	case int8:
		return TypeInt8, nil
	case uint16:
		return TypeUint16, nil
	case int16:
		return TypeInt16, nil
	case uint32:
		return TypeUint32, nil
	case int32:
		return TypeInt32, nil
	case float32:
		return TypeFloat32, nil
	case bool:
		return TypeBool, nil
	case string:
		return TypeString, nil
	case uint64:
		return TypeUint64, nil
	case int64:
		return TypeInt64, nil
	case float64:
		return TypeFloat64, nil
	case []string, []float32, []int32, []uint32:
		return TypeArray, nil
	}
	return 0, fmt.Errorf("unsupported value type %T", v)
}

// tensorInfo writes one tensor's name, shape, type and data offset.
func (e *encoder) tensorInfo(t TensorInfo) {
	e.str(t.Name)
	e.u32(uint32(len(t.Shape)))
	for _, d := range t.Shape {
		e.u64(d)
	}
	e.u32(uint32(t.Type))
	e.u64(t.Offset)
}

// floats writes values as t (F32 or F16).
func (e *encoder) floats(t TensorType, vals []float32) {
	for _, v := range vals {
		if t == F16 {
			binary.LittleEndian.PutUint16(e.buf[:2], Float16Bits(v))
			e.bytes(e.buf[:2])
		} else {
			e.u32(math.Float32bits(v))
		}
	}
}
