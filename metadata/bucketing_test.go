package metadata

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestBucketing replays testdata/bucketing:
//
//	bucket n=<buckets>       input: one key per line, hex:<bytes> or utf8:<text>
//	encode types=(T, ...) [n=<buckets>]
//	                         input: one key per line, values separated by " | "
//	                         (NULL for nil), coerced from text to the types
func TestBucketing(t *testing.T) {
	datadriven.RunTest(t, "testdata/bucketing", func(t *testing.T, d *datadriven.TestData) string {
		var out strings.Builder
		switch d.Cmd {
		case "bucket":
			var n int
			d.ScanArgs(t, "n", &n)
			for _, line := range strings.Split(d.Input, "\n") {
				var key []byte
				switch {
				case strings.HasPrefix(line, "hex:"):
					var err error
					key, err = hex.DecodeString(line[4:])
					require.NoError(t, err)
				case strings.HasPrefix(line, "utf8:"):
					key = []byte(line[5:])
				default:
					d.Fatalf(t, "bad key line %q", line)
				}
				fmt.Fprintf(&out, "%d\n", BucketOf(key, n))
			}
		case "encode":
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
			n := 16
			if d.HasArg("n") {
				d.ScanArgs(t, "n", &n)
			}
			for _, line := range strings.Split(d.Input, "\n") {
				var vals []any
				for _, f := range strings.Split(line, " | ") {
					if f == "NULL" {
						vals = append(vals, nil)
					} else {
						vals = append(vals, f)
					}
				}
				key, err := EncodeKey(types, vals)
				if err != nil {
					fmt.Fprintf(&out, "error: %v\n", err)
					continue
				}
				fmt.Fprintf(&out, "%x bucket=%d\n", key, BucketOf(key, n))
			}
		default:
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		return out.String()
	})
}

func TestBucketOfEdges(t *testing.T) {
	require.Equal(t, 0, BucketOf(nil, 8), "empty key")
	require.Equal(t, 0, BucketOf([]byte{1}, 0), "no buckets")
	require.Equal(t, 0, BucketOf([]byte{1}, -3), "negative bucket count")
	for i := range 1000 {
		key := []byte(fmt.Sprint(i))
		b := BucketOf(key, 7)
		require.True(t, b >= 0 && b < 7)
	}
}

func TestEncodeKeyTypedValues(t *testing.T) {
	// Canonical values and Go values encode the same as their text.
	a, err := EncodeKey([]DataType{IntType(), StringType()}, []any{int32(200), "x"})
	require.NoError(t, err)
	b, err := EncodeKey([]DataType{IntType(), StringType()}, []any{"200", "x"})
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Equal(t, []byte{0xc8, 0x01, 0x01, 'x'}, a)

	_, err = EncodeKey([]DataType{IntType()}, []any{nil})
	require.ErrorIs(t, err, ErrConstraint)
	_, err = EncodeKey([]DataType{ArrayType(IntType())}, []any{[]int{1}})
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = EncodeKey([]DataType{IntType()}, []any{1, 2})
	require.ErrorIs(t, err, ErrInvalidValue)
}

func TestTwosComplement(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "00"}, {1, "01"}, {127, "7f"}, {128, "0080"}, {255, "00ff"}, {256, "0100"},
		{-1, "ff"}, {-128, "80"}, {-129, "ff7f"}, {-256, "ff00"}, {-32768, "8000"}, {-32769, "ff7fff"},
	} {
		got := twosComplement(NewDecimal(c.n, 0).Num.BigInt())
		require.Equal(t, c.want, hex.EncodeToString(got), "n=%d", c.n)
	}
}
