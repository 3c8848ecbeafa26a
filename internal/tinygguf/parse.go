package tinygguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// File is a parsed GGUF header: metadata and tensor infos in file order.
type File struct {
	Version    uint32
	Meta       []KV
	Tensors    []TensorInfo
	DataOffset int64 // where the tensor data section starts in the file
}

// Limits that keep a corrupt file from allocating without bound.
const (
	maxStringLen = 1 << 20
	maxArrayLen  = 1 << 24
	maxDims      = 4
)

// Get returns the value of metadata key k.
func (f *File) Get(k string) (any, bool) {
	for _, kv := range f.Meta {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return nil, false
}

// Tensor returns the info of the tensor called name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// ReadTensor decodes the values of tensor name from r, the whole file.
func (f *File) ReadTensor(r io.ReaderAt, name string) ([]float32, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: no tensor %q", name)
	}
	if t.Type != F32 && t.Type != F16 {
		return nil, fmt.Errorf("gguf: tensor %q: cannot decode %v", name, t.Type)
	}
	raw := make([]byte, t.Size())
	if _, err := r.ReadAt(raw, f.DataOffset+int64(t.Offset)); err != nil {
		return nil, fmt.Errorf("gguf: tensor %q at offset %d: %w", name, t.Offset, err)
	}
	return decodeFloats(t.Type, raw), nil
}

func decodeFloats(t TensorType, raw []byte) []float32 {
	out := make([]float32, len(raw)/int(t.ElemSize()))
	for i := range out {
		if t == F16 {
			out[i] = Float16From(binary.LittleEndian.Uint16(raw[2*i:]))
		} else {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return out
}

// Parse reads a GGUF header (version 2 or 3) from r. Errors name the byte
// offset and the metadata key or tensor being read.
func Parse(r io.Reader) (*File, error) {
	d := &decoder{r: bufio.NewReader(r)}
	f, err := d.file()
	if err != nil {
		return nil, fmt.Errorf("gguf: at byte %d: %w", d.n, err)
	}
	return f, nil
}

type decoder struct {
	r    *bufio.Reader
	n    int64 // bytes consumed
	fail error // first read error; later reads return zero values
	buf  [8]byte
}

func (d *decoder) file() (*File, error) {
	nt, nkv, version, err := d.header()
	if err != nil {
		return nil, err
	}
	f := &File{Version: version}
	for i := range nkv {
		kv, err := d.kv()
		if err != nil {
			return nil, fmt.Errorf("metadata entry %d: %w", i, err)
		}
		f.Meta = append(f.Meta, kv)
	}
	for i := range nt {
		t, err := d.tensorInfo()
		if err != nil {
			return nil, fmt.Errorf("tensor info %d: %w", i, err)
		}
		f.Tensors = append(f.Tensors, t)
	}
	f.DataOffset = int64(alignUp(uint64(d.n)))
	return f, nil
}

func (d *decoder) header() (tensors, kvs uint64, version uint32, err error) {
	magic := d.bytes(4)
	if d.fail == nil && string(magic) != Magic {
		return 0, 0, 0, fmt.Errorf("bad magic %q, want %q", magic, Magic)
	}
	version = d.u32()
	tensors, kvs = d.u64(), d.u64()
	if d.fail == nil && version != 2 && version != 3 {
		return 0, 0, 0, fmt.Errorf("unsupported version %d", version)
	}
	return tensors, kvs, version, d.fail
}

var errShort = errors.New("unexpected end of file")

// bytes reads n bytes (n is bounded by the callers).
func (d *decoder) bytes(n int) []byte {
	if d.fail != nil {
		return nil
	}
	b := make([]byte, n)
	m, err := io.ReadFull(d.r, b)
	d.n += int64(m)
	if err != nil {
		d.fail = errShort
		return nil
	}
	return b
}

func (d *decoder) fixed(n int) []byte {
	if d.fail != nil {
		clear(d.buf[:n]) // zero values after a failure; the caller checks d.fail
		return d.buf[:n]
	}
	m, err := io.ReadFull(d.r, d.buf[:n])
	d.n += int64(m)
	if err != nil {
		d.fail = errShort
		clear(d.buf[:])
	}
	return d.buf[:n]
}

func (d *decoder) u8() uint8   { return d.fixed(1)[0] }
func (d *decoder) u16() uint16 { return binary.LittleEndian.Uint16(d.fixed(2)) }
func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.fixed(4)) }
func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.fixed(8)) }

func (d *decoder) str() string {
	n := d.u64()
	if d.fail == nil && n > maxStringLen {
		d.fail = fmt.Errorf("string of %d bytes exceeds the %d limit", n, maxStringLen)
	}
	return string(d.bytes(int(min(n, maxStringLen))))
}

func (d *decoder) kv() (KV, error) {
	key := d.str()
	t := ValueType(d.u32())
	v := d.value(t)
	if d.fail != nil {
		return KV{}, fmt.Errorf("key %q: %w", key, d.fail)
	}
	return KV{Key: key, Value: v}, nil
}

// value reads one value of type t; arrays become typed slices.
func (d *decoder) value(t ValueType) any {
	switch t {
	case TypeArray:
		return d.array()
	case TypeString:
		return d.str()
	case TypeBool:
		return d.u8() != 0
	}
	return d.number(t)
}

func (d *decoder) number(t ValueType) any {
	switch t {
	case TypeUint8:
		return d.u8()
	case TypeInt8:
		return int8(d.u8())
	case TypeUint16:
		return d.u16()
	case TypeInt16:
		return int16(d.u16())
	case TypeUint32:
		return d.u32()
	case TypeInt32:
		return int32(d.u32())
	case TypeFloat32:
		return math.Float32frombits(d.u32())
	case TypeUint64:
		return d.u64()
	case TypeInt64:
		return int64(d.u64())
	case TypeFloat64:
		return math.Float64frombits(d.u64())
	}
	if d.fail == nil {
		d.fail = fmt.Errorf("unknown value type %d", t)
	}
	return nil
}

func (d *decoder) array() any {
	et := ValueType(d.u32())
	n := d.u64()
	if d.fail == nil && n > maxArrayLen {
		d.fail = fmt.Errorf("array of %d elements exceeds the %d limit", n, maxArrayLen)
	}
	if d.fail != nil {
		return nil
	}
	switch et {
	case TypeString:
		return readN(d, n, (*decoder).str)
	case TypeFloat32:
		return readN(d, n, func(d *decoder) float32 { return math.Float32frombits(d.u32()) })
	case TypeInt32:
		return readN(d, n, func(d *decoder) int32 { return int32(d.u32()) })
	case TypeUint32:
		return readN(d, n, (*decoder).u32)
	}
	return readN(d, n, func(d *decoder) any { return d.value(et) })
}

func readN[T any](d *decoder, n uint64, one func(*decoder) T) []T {
	out := make([]T, 0, min(n, 1<<16))
	for i := uint64(0); i < n && d.fail == nil; i++ {
		out = append(out, one(d))
	}
	return out
}

func (d *decoder) tensorInfo() (TensorInfo, error) {
	t := TensorInfo{Name: d.str()}
	nd := d.u32()
	if d.fail != nil {
		return t, fmt.Errorf("tensor %q: %w", t.Name, d.fail)
	}
	if nd == 0 || nd > maxDims {
		return t, fmt.Errorf("tensor %q: %d dimensions", t.Name, nd)
	}
	for range nd {
		t.Shape = append(t.Shape, d.u64())
	}
	t.Type = TensorType(d.u32())
	t.Offset = d.u64()
	if d.fail != nil {
		return t, fmt.Errorf("tensor %q: %w", t.Name, d.fail)
	}
	return t, nil
}
