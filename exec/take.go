package exec

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
)

// takeArray gathers rows idx of arr into a new array of arr's type; an
// index below zero gives NULL (the missing side of an outer join). The
// fixed-width and string layouts are copied buffer to buffer, since a
// join gathers every output column this way and a builder's per-value
// calls would cost more than the hash lookups; nested types go through
// builders. The caller releases the result.
func takeArray(mem memory.Allocator, arr arrow.Array, t metadata.DataType, idx []int32) (arrow.Array, error) {
	dt := arr.DataType()
	if arr.Len() == 0 {
		// Only missing rows can be taken from an empty array.
		return array.MakeArrayOfNull(mem, dt, len(idx)), nil
	}
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		return takeBinary(mem, arr, idx), nil
	case arrow.BOOL:
		return takeBool(mem, arr.(*array.Boolean), idx), nil
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok && dt.ID() != arrow.FIXED_SIZE_BINARY {
		switch fw.BitWidth() {
		case 8:
			return takeFixed[uint8](mem, arr, idx), nil
		case 16:
			return takeFixed[uint16](mem, arr, idx), nil
		case 32:
			return takeFixed[uint32](mem, arr, idx), nil
		case 64:
			return takeFixed[uint64](mem, arr, idx), nil
		case 128:
			return takeFixed[decimal128.Num](mem, arr, idx), nil
		}
	}
	bld := array.NewBuilder(mem, dt)
	defer bld.Release()
	bld.Reserve(len(idx))
	for _, i := range idx {
		if i < 0 {
			bld.AppendNull()
			continue
		}
		if err := appendFrom(bld, arr, t, int(i)); err != nil {
			return nil, err
		}
	}
	return bld.NewArray(), nil
}

// takeValidity returns the validity bitmap of the gathered rows and their
// NULL count, or nil when none is NULL.
func takeValidity(mem memory.Allocator, arr arrow.Array, idx []int32) (*memory.Buffer, int) {
	hasNulls := arr.NullN() > 0
	if !hasNulls {
		missing := false
		for _, i := range idx {
			if i < 0 {
				missing = true
				break
			}
		}
		if !missing {
			return nil, 0
		}
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(idx)))))
	bits := buf.Bytes()
	clear(bits)
	nulls := 0
	for j, i := range idx {
		if i < 0 || (hasNulls && arr.IsNull(int(i))) {
			nulls++
			continue
		}
		bitutil.SetBit(bits, j)
	}
	return buf, nulls
}

func takeFixed[T uint8 | uint16 | uint32 | uint64 | decimal128.Num](mem memory.Allocator, arr arrow.Array, idx []int32) arrow.Array {
	src := arrow.GetValues[T](arr.Data(), 1)
	vals := memory.NewResizableBuffer(mem)
	var zero T
	vals.Resize(len(idx) * int(unsafe.Sizeof(zero)))
	dst := arrow.GetData[T](vals.Bytes())
	for j, i := range idx {
		if i >= 0 {
			dst[j] = src[i]
		} else {
			dst[j] = zero
		}
	}
	valid, nulls := takeValidity(mem, arr, idx)
	return finishTake(arr.DataType(), len(idx), []*memory.Buffer{valid, vals}, nulls)
}

func takeBinary(mem memory.Allocator, arr arrow.Array, idx []int32) arrow.Array {
	data := arr.Data()
	offs := arrow.GetOffsets[int32](data, 1)
	var src []byte
	if b := data.Buffers()[2]; b != nil {
		src = b.Bytes()
	}
	total := 0
	for _, i := range idx {
		if i >= 0 {
			total += int(offs[i+1] - offs[i])
		}
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(idx) + 1) * 4)
	dstOffs := arrow.GetData[int32](offBuf.Bytes())
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(total)
	dst := dataBuf.Bytes()
	pos := int32(0)
	for j, i := range idx {
		dstOffs[j] = pos
		if i >= 0 {
			pos += int32(copy(dst[pos:], src[offs[i]:offs[i+1]]))
		}
	}
	dstOffs[len(idx)] = pos
	valid, nulls := takeValidity(mem, arr, idx)
	return finishTake(arr.DataType(), len(idx), []*memory.Buffer{valid, offBuf, dataBuf}, nulls)
}

func takeBool(mem memory.Allocator, arr *array.Boolean, idx []int32) arrow.Array {
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(len(idx)))))
	bits := vals.Bytes()
	clear(bits)
	for j, i := range idx {
		if i >= 0 && arr.Value(int(i)) {
			bitutil.SetBit(bits, j)
		}
	}
	valid, nulls := takeValidity(mem, arr, idx)
	return finishTake(arr.DataType(), len(idx), []*memory.Buffer{valid, vals}, nulls)
}

// finishTake wraps the buffers into an array, which takes its own
// references to them.
func finishTake(dt arrow.DataType, n int, bufs []*memory.Buffer, nulls int) arrow.Array {
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer data.Release()
	return array.MakeFromData(data)
}
