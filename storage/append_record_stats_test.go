package storage

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestTypedExtremes: the typed loops of the statistics find the same
// positions as the generic one with metadata's comparisons, NaN and
// repeated extremes included (the first of equal extremes wins).
func TestTypedExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pool := []float64{math.NaN(), math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), 1.5, -2, 7}
	words := []string{"", "a", "ab", "b", "ba", "zz", "é", "Z"}
	for round := range 500 {
		n := 1 + rng.IntN(12)
		if round == 0 {
			n = 0
		}
		fb := array.NewFloat64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for range n {
			fb.Append(pool[rng.IntN(len(pool))])
			sb.Append(words[rng.IntN(len(words))])
		}
		fa, sa := fb.NewFloat64Array(), sb.NewStringArray()
		wantLo, wantHi := extremes(fa, fa.Value, metadata.CompareFloat)
		lo, hi := floatExtremes(fa.Float64Values())
		require.Equal(t, [2]int{wantLo, wantHi}, [2]int{lo, hi}, "floats %v", fa.Float64Values())
		wantLo, wantHi = extremes(sa, sa.Value, strings.Compare)
		lo, hi = stringExtremes(sa)
		require.Equal(t, [2]int{wantLo, wantHi}, [2]int{lo, hi}, "strings %v", sa)
		fa.Release()
		sa.Release()
		fb.Release()
		sb.Release()
	}
}
