package metadata

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"
)

// EncodeKey encodes a bucket key (or primary key) the way Fluss's
// CompactedKeyEncoder does, so that BucketOf assigns the buckets Fluss
// would: the fields are concatenated in key order with no null bitmap.
//
//	BOOLEAN, TINYINT         1 byte
//	SMALLINT                 2 bytes little-endian
//	INT, DATE (days),        unsigned LEB128 varint of the 32-bit pattern
//	TIME (ms of day)         (a negative value takes 5 bytes)
//	BIGINT                   unsigned LEB128 varint of the 64-bit pattern
//	FLOAT, DOUBLE            IEEE bits, 4 or 8 bytes little-endian
//	CHAR, STRING,            varint length, then the bytes
//	BINARY, BYTES
//	DECIMAL(p<=18)           BIGINT varint of the unscaled value
//	DECIMAL(p>18)            varint length, then the unscaled value in
//	                         minimal big-endian two's complement
//	TIMESTAMP[_LTZ](p<=3)    BIGINT varint of epoch milliseconds
//	TIMESTAMP[_LTZ](p>3)     the same, then INT varint of nanoseconds
//	                         within the millisecond
//
// values are coerced to their types first. A NULL value is ErrConstraint;
// ARRAY, MAP and ROW are not key types (ErrUnsupported).
func EncodeKey(types []DataType, values []any) ([]byte, error) {
	return AppendKey(nil, types, values)
}

// AppendKey is EncodeKey appending the key to dst.
func AppendKey(dst []byte, types []DataType, values []any) ([]byte, error) {
	if len(types) != len(values) {
		return nil, fmt.Errorf("%w: %d key types but %d key values", ErrInvalidValue, len(types), len(values))
	}
	buf := dst
	for i, t := range types {
		v, err := CoerceValue(t, values[i])
		if err != nil {
			return nil, fmt.Errorf("key field %d: %w", i, err)
		}
		if v == nil {
			return nil, fmt.Errorf("%w: key field %d (%s) must not be NULL", ErrConstraint, i, t)
		}
		buf, err = appendKeyField(buf, t, v)
		if err != nil {
			return nil, fmt.Errorf("key field %d: %w", i, err)
		}
	}
	return buf, nil
}

func appendKeyField(buf []byte, t DataType, v any) ([]byte, error) {
	switch t.Root {
	case Boolean:
		if v.(bool) {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case TinyInt:
		return append(buf, byte(int8(v.(int64)))), nil
	case SmallInt:
		return binary.LittleEndian.AppendUint16(buf, uint16(int16(v.(int64)))), nil
	case Int:
		return binary.AppendUvarint(buf, uint64(uint32(int32(v.(int64))))), nil
	case BigInt:
		return binary.AppendUvarint(buf, uint64(v.(int64))), nil
	case Float:
		return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v.(float64)))), nil
	case Double:
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.(float64))), nil
	case Char, String:
		s := v.(string)
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		return append(buf, s...), nil
	case Binary, Bytes:
		b := v.([]byte)
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		return append(buf, b...), nil
	case Decimal:
		n := v.(DecimalValue).Num.BigInt()
		if t.Precision <= 18 {
			return binary.AppendUvarint(buf, uint64(n.Int64())), nil
		}
		b := twosComplement(n)
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		return append(buf, b...), nil
	case Date:
		return binary.AppendUvarint(buf, uint64(uint32(int32(v.(DateValue))))), nil
	case Time:
		ms := int64(v.(TimeValue)) / int64(time.Millisecond)
		return binary.AppendUvarint(buf, uint64(uint32(int32(ms)))), nil
	case Timestamp, TimestampLTZ:
		ts := v.(time.Time)
		buf = binary.AppendUvarint(buf, uint64(ts.UnixMilli()))
		if t.Precision > 3 {
			buf = binary.AppendUvarint(buf, uint64(ts.Nanosecond()%int(time.Millisecond)))
		}
		return buf, nil
	}
	return nil, fmt.Errorf("%w: %s cannot be part of a key", ErrUnsupported, t)
}

// twosComplement is n in the fewest big-endian two's-complement bytes that
// hold it (at least one), as Java's BigInteger.toByteArray.
func twosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n - 1 has the complement bits of n.
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// bucketHashSeed is Fluss's murmur3 seed.
const bucketHashSeed = 42

// BucketOf returns the bucket of an encoded key among numBuckets, as Fluss's
// FlussBucketingFunction does: 32-bit murmur3 with seed 42 over the key
// (whole little-endian words, then each tail byte sign-extended on its
// own round), the murmur3 finaliser, then a second murmur round of the
// hash, made non-negative, modulo numBuckets. It returns 0 when numBuckets
// is not positive or the key is empty, which Fluss refuses.
func BucketOf(key []byte, numBuckets int) int {
	if numBuckets <= 0 || len(key) == 0 {
		return 0
	}
	h := murmurBytes(key, bucketHashSeed)
	return int(rehash(h)) % numBuckets
}

const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

func mixK1(k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	return k * murmurC2
}

func mixH1(h, k uint32) uint32 {
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

func murmurBytes(b []byte, seed uint32) uint32 {
	h := seed
	n := len(b) &^ 3
	for i := 0; i < n; i += 4 {
		h = mixH1(h, mixK1(binary.LittleEndian.Uint32(b[i:])))
	}
	for _, c := range b[n:] {
		// Fluss reads the tail as a signed Java byte.
		h = mixH1(h, mixK1(uint32(int32(int8(c)))))
	}
	return fmix32(h ^ uint32(len(b)))
}

// rehash is Fluss's MathUtils.murmurHash: one more murmur round of h as a
// 4-byte input, then the absolute value (MinInt32 maps to 0).
func rehash(h uint32) int32 {
	c := int32(fmix32(mixH1(0, mixK1(h)) ^ 4))
	switch {
	case c >= 0:
		return c
	case c == math.MinInt32:
		return 0
	}
	return -c
}
