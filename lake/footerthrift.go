package lake

import (
	"errors"
	"fmt"
)

// checkFooterThrift walks a Parquet footer's thrift (compact protocol)
// without decoding it and fails when a list, set, map or string declares
// more elements than the bytes left could hold. The thrift library
// arrow-go decodes the footer with bounds a container only by a 100 MB
// message limit and makes the slice before reading an element: a
// 17-byte footer declaring a schema of 100 million elements costs 800
// MB. The walk is what keeps a file the lake cannot vouch for (listed
// without a footer checksum, or being imported) from sizing allocations.
func checkFooterThrift(b []byte) error {
	w := thriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return fmt.Errorf("footer metadata at byte %d: %w", w.at, err)
	}
	return nil
}

// thriftMaxDepth bounds nesting; the Parquet footer nests a few levels.
const thriftMaxDepth = 64

// Compact protocol types.
const (
	tcStop = iota
	tcTrue
	tcFalse
	tcByte
	tcI16
	tcI32
	tcI64
	tcDouble
	tcBinary
	tcList
	tcSet
	tcMap
	tcStruct
	tcUUID
)

type thriftWalker struct {
	b  []byte
	at int
}

func (w *thriftWalker) left() int { return len(w.b) - w.at }

func (w *thriftWalker) byte() (byte, error) {
	if w.at >= len(w.b) {
		return 0, errors.New("truncated")
	}
	c := w.b[w.at]
	w.at++
	return c, nil
}

func (w *thriftWalker) varint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c, err := w.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint too long")
}

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(w.left()) {
		return fmt.Errorf("%d bytes declared, %d left", n, w.left())
	}
	w.at += int(n)
	return nil
}

func (w *thriftWalker) structure(depth int) error {
	if depth > thriftMaxDepth {
		return errors.New("nested too deep")
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == tcStop {
			return nil
		}
		if h>>4 == 0 {
			// The field id does not fit the header's delta.
			if _, err := w.varint(); err != nil {
				return err
			}
		}
		switch typ := h & 0x0f; typ {
		case tcTrue, tcFalse:
			// The value is the type.
		default:
			if err := w.value(typ, depth); err != nil {
				return err
			}
		}
	}
}

// minSize is the fewest bytes a value of a compact type takes.
func minSize(typ byte) uint64 {
	switch typ {
	case tcDouble:
		return 8
	case tcUUID:
		return 16
	}
	return 1
}

func (w *thriftWalker) value(typ byte, depth int) error {
	switch typ {
	case tcTrue, tcFalse, tcByte:
		return w.skip(1)
	case tcI16, tcI32, tcI64:
		_, err := w.varint()
		return err
	case tcDouble:
		return w.skip(8)
	case tcUUID:
		return w.skip(16)
	case tcBinary:
		n, err := w.varint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case tcList, tcSet:
		h, err := w.byte()
		if err != nil {
			return err
		}
		n, elem := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = w.varint(); err != nil {
				return err
			}
		}
		return w.elements(n, depth, elem)
	case tcMap:
		n, err := w.varint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		return w.elements(n, depth, kv>>4, kv&0x0f)
	case tcStruct:
		return w.structure(depth + 1)
	}
	return fmt.Errorf("unknown thrift type %d", typ)
}

// elements walks n container elements, each a value of every given type
// in turn (one type for lists and sets, key and value for maps).
func (w *thriftWalker) elements(n uint64, depth int, types ...byte) error {
	var least uint64
	for _, t := range types {
		least += minSize(t)
	}
	if n > uint64(w.left())/least {
		return fmt.Errorf("a container of %d elements, %d bytes left", n, w.left())
	}
	for range n {
		for _, t := range types {
			if err := w.value(t, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
