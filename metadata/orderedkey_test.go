package metadata

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestOrderedKeyGolden replays testdata/ordered_key:
//
//	encode types=(T, ...)    input: one key per line, values separated by
//	                         " | " (NULL for nil), coerced from text
func TestOrderedKeyGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/ordered_key", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "encode" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		var types []DataType
		for _, arg := range d.CmdArgs {
			if arg.Key != "types" {
				continue
			}
			for _, v := range arg.Vals {
				typ, err := parseTestType(v)
				require.NoError(t, err)
				types = append(types, typ)
			}
		}
		var out strings.Builder
		for _, line := range strings.Split(d.Input, "\n") {
			var vals []any
			for _, f := range strings.Split(line, " | ") {
				if f == "NULL" {
					vals = append(vals, nil)
				} else {
					vals = append(vals, f)
				}
			}
			key, err := EncodeOrderedKey(types, vals)
			if err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
				continue
			}
			fmt.Fprintf(&out, "%x\n", key)
		}
		return out.String()
	})
}

// orderedTypes are the key types with a generator of random canonical
// values, biased towards edge values so that ties, signs and prefixes
// come up often.
var orderedTypes = []struct {
	t   DataType
	gen func(r *rand.Rand) any
}{
	{BooleanType(), func(r *rand.Rand) any { return r.IntN(2) == 1 }},
	{TinyIntType(), func(r *rand.Rand) any { return pickInt(r, math.MinInt8, math.MaxInt8) }},
	{SmallIntType(), func(r *rand.Rand) any { return pickInt(r, math.MinInt16, math.MaxInt16) }},
	{IntType(), func(r *rand.Rand) any { return pickInt(r, math.MinInt32, math.MaxInt32) }},
	{BigIntType(), func(r *rand.Rand) any { return pickInt(r, math.MinInt64, math.MaxInt64) }},
	{FloatType(), func(r *rand.Rand) any { return float64(float32(pickFloat(r))) }},
	{DoubleType(), func(r *rand.Rand) any { return pickFloat(r) }},
	{DecimalType(10, 2), func(r *rand.Rand) any { return NewDecimal(pickInt(r, -9999999999, 9999999999), 2) }},
	{DecimalType(38, 5), func(r *rand.Rand) any {
		n := new(big.Int).SetUint64(r.Uint64())
		n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(r.Uint64()))
		n.Mod(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil))
		if r.IntN(2) == 0 {
			n.Neg(n)
		}
		if r.IntN(4) == 0 {
			n.SetInt64(pickInt(r, -3, 3))
		}
		return DecimalValue{Num: decimal128.FromBigInt(n), Scale: 5}
	}},
	{StringType(), func(r *rand.Rand) any { return pickString(r) }},
	{CharType(5), func(r *rand.Rand) any { return pickString(r) }},
	{BytesType(), func(r *rand.Rand) any { return pickBytes(r) }},
	{BinaryType(2), func(r *rand.Rand) any { return []byte{byte(r.IntN(3)), byte(r.IntN(256))} }},
	{DateType(), func(r *rand.Rand) any { return DateValue(pickInt(r, -719162, 2932896)) }},
	{TimeType(9), func(r *rand.Rand) any { return TimeValue(pickInt(r, 0, 86400*1e9-1)) }},
	{TimestampType(6), func(r *rand.Rand) any { return pickTime(r).Truncate(time.Microsecond) }},
	{TimestampLTZType(3), func(r *rand.Rand) any { return pickTime(r).Truncate(time.Millisecond) }},
}

func pickInt(r *rand.Rand, lo, hi int64) int64 {
	switch r.IntN(6) {
	case 0:
		return lo
	case 1:
		return hi
	case 2:
		return max(lo, min(hi, int64(r.IntN(5)-2)))
	}
	span := uint64(hi - lo)
	if span == math.MaxUint64 {
		return int64(r.Uint64())
	}
	return lo + int64(r.Uint64N(span+1))
}

func pickFloat(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		return []float64{math.Inf(1), math.Inf(-1), math.NaN(), 0, math.Copysign(0, -1), math.SmallestNonzeroFloat64, -math.MaxFloat64}[r.IntN(7)]
	case 1:
		return float64(r.IntN(5) - 2)
	}
	return math.Float64frombits(r.Uint64())
}

// pickBytes favours short strings over a tiny alphabet with 0x00 and
// 0xFF, where escaping and prefixes matter.
func pickBytes(r *rand.Rand) []byte {
	n := r.IntN(5)
	b := make([]byte, n)
	for i := range b {
		b[i] = []byte{0, 1, 'a', 0xFF}[r.IntN(4)]
	}
	return b
}

// pickString is pickBytes for text: up to 4 runes, valid UTF-8.
func pickString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(5) {
		b.WriteString([]string{"\x00", "\x01", "a", "\u00e9", "\U0001F600"}[r.IntN(5)])
	}
	return b.String()
}

func pickTime(r *rand.Rand) time.Time {
	sec := pickInt(r, -62135596800, 253402300799) // years 1 to 9999
	ns := int64(0)
	if r.IntN(2) == 0 {
		ns = int64(r.IntN(1e9))
	}
	return time.Unix(sec, ns).UTC()
}

func sign(x int) int { return max(-1, min(1, x)) }

func TestOrderedKeyOrdersLikeCompare(t *testing.T) {
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	for _, ot := range orderedTypes {
		for range 2000 {
			a, b := ot.gen(r), ot.gen(r)
			ka, err := EncodeOrderedKey([]DataType{ot.t}, []any{a})
			require.NoError(t, err, "%s %v", ot.t, a)
			kb, err := EncodeOrderedKey([]DataType{ot.t}, []any{b})
			require.NoError(t, err, "%s %v", ot.t, b)
			require.Equal(t, sign(Compare(a, b)), sign(bytes.Compare(ka, kb)), "seed %d: %s: %v vs %v (%x vs %x)", seed, ot.t, a, b, ka, kb)
		}
	}
	// Composite keys: the first field decides unless equal, whatever the
	// lengths of variable-width fields.
	for range 3000 {
		i, j := r.IntN(len(orderedTypes)), r.IntN(len(orderedTypes))
		types := []DataType{orderedTypes[i].t, orderedTypes[j].t}
		a := []any{orderedTypes[i].gen(r), orderedTypes[j].gen(r)}
		b := []any{orderedTypes[i].gen(r), orderedTypes[j].gen(r)}
		if r.IntN(2) == 0 {
			b[0] = a[0]
		}
		ka, err := EncodeOrderedKey(types, a)
		require.NoError(t, err)
		kb, err := EncodeOrderedKey(types, b)
		require.NoError(t, err)
		want := Compare(a[0], b[0])
		if want == 0 {
			want = Compare(a[1], b[1])
		}
		require.Equal(t, sign(want), sign(bytes.Compare(ka, kb)), "seed %d: %v: %v vs %v", seed, types, a, b)
	}
}

func TestOrderedKeyErrors(t *testing.T) {
	_, err := EncodeOrderedKey([]DataType{IntType()}, []any{nil})
	require.ErrorIs(t, err, ErrConstraint)
	_, err = EncodeOrderedKey([]DataType{ArrayType(IntType())}, []any{[]any{int64(1)}})
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = EncodeOrderedKey([]DataType{IntType()}, []any{1, 2})
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = EncodeOrderedKey([]DataType{TinyIntType()}, []any{int64(300)})
	require.ErrorIs(t, err, ErrInvalidValue)
	// Appending keeps what dst held.
	k, err := AppendOrderedKey([]byte{9}, []DataType{BooleanType()}, []any{true})
	require.NoError(t, err)
	require.Equal(t, []byte{9, 1}, k)
}

func TestKeyIndexes(t *testing.T) {
	info, err := NewTableInfo(TableDescriptor{
		Path: TablePath{Database: "db", Table: "t"},
		Schema: Schema{Columns: []Column{
			{Name: "v", Type: StringType()}, {Name: "dt", Type: StringType()}, {Name: "id", Type: IntType()},
		}, PrimaryKey: []string{"id", "dt"}},
		PartitionKeys: []string{"dt"},
	}, 1, 1, time.Now())
	require.NoError(t, err)
	require.Equal(t, []int{2, 1}, info.PrimaryKeyIndexes())
	require.Equal(t, []int{2}, info.PhysicalKeyIndexes())
	var log TableInfo
	require.Nil(t, log.PrimaryKeyIndexes())
}

// TestDecodeOrderedKey: decoding an encoded key gives back the coerced
// values (a -0 as 0, every NaN as NaN), single and composite, and the
// re-encoding is byte-identical; a truncated or padded key is an error.
func TestDecodeOrderedKey(t *testing.T) {
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	t.Logf("seed %d", seed)
	for range 5000 {
		i, j := r.IntN(len(orderedTypes)), r.IntN(len(orderedTypes))
		types := []DataType{orderedTypes[i].t, orderedTypes[j].t}
		vals := []any{orderedTypes[i].gen(r), orderedTypes[j].gen(r)}
		k, err := EncodeOrderedKey(types, vals)
		require.NoError(t, err)
		got, err := DecodeOrderedKey(types, k)
		require.NoError(t, err, "seed %d: %v %v", seed, types, vals)
		for f := range types {
			require.Zero(t, Compare(vals[f], got[f]), "seed %d: %s: %v came back as %v", seed, types[f], vals[f], got[f])
			want, err := CoerceValue(types[f], got[f])
			require.NoError(t, err)
			require.IsType(t, want, got[f], "seed %d: %s: decoded values are canonical", seed, types[f])
			require.Zero(t, Compare(want, got[f]), "seed %d: %s: decoded values are canonical", seed, types[f])
		}
		again, err := EncodeOrderedKey(types, got)
		require.NoError(t, err)
		require.Equal(t, k, again, "seed %d: %v %v", seed, types, vals)
		_, err = DecodeOrderedKey(types, k[:len(k)-1])
		require.ErrorIs(t, err, ErrInvalidValue, "seed %d: truncated %v", seed, types)
		_, err = DecodeOrderedKey(types, append(k, 0))
		require.ErrorIs(t, err, ErrInvalidValue, "seed %d: padded %v", seed, types)
	}
}
