package fluss

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// The repeated system columns are slices of cached columns: each holds
// its value n times whatever was asked before (longer or shorter, more
// values than the cache keeps), and every buffer is released with them.
func TestConstColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := constColumns{mem: mem}
	var held []arrow.Array
	for round, n := range []int{3, 1, 5000, 2, 70000, 0, 1024} {
		for p := range maxConstColumns + 5 {
			name := fmt.Sprintf("p%d", p)
			s := c.str(name, n)
			require.Equal(t, n, s.Len())
			for k := 0; k < n; k += max(1, n/7) {
				require.Equal(t, name, s.(*array.String).Value(k), "round %d", round)
			}
			held = append(held, s)
			b := c.int32(int32(p), n)
			require.Equal(t, n, b.Len())
			if n > 0 {
				require.Equal(t, int32(p), b.(*array.Int32).Value(n-1))
			}
			b.Release()
		}
		z := c.null(arrow.PrimitiveTypes.Int64, n)
		require.Equal(t, n, z.NullN())
		z.Release()
	}
	// A slice handed out outlives the cache's columns.
	c.release()
	last := held[len(held)-1].(*array.String)
	require.Equal(t, fmt.Sprintf("p%d", maxConstColumns+4), last.Value(last.Len()-1))
	for _, a := range held {
		a.Release()
	}
}

// The fill pool hands a freed buffer of the same size out again, keeps a
// few of each size, and gives every buffer back to the caller's
// allocator once closed, also one freed after that.
func TestFillPool(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := &fillPool{base: mem}
	a := p.Allocate(512)
	p.Free(a)
	b := p.Allocate(512)
	require.Equal(t, &a[0], &b[0], "the freed buffer again")
	var held [][]byte
	for range maxFillFree + 3 {
		held = append(held, p.Allocate(256))
	}
	for _, h := range held {
		p.Free(h)
	}
	require.Len(t, p.free[256], maxFillFree)
	late := p.Allocate(1024)
	p.close()
	p.Free(late)
	p.Free(b)
	require.Empty(t, p.free)
}
