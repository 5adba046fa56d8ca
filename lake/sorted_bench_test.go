package lake

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// BenchmarkSortedRead reads a primary-key bucket of 500,000 rows through
// OpenSorted, every column: from one file (single), and from two files of
// the same keys, the newer winning every other key (merged).
//
//	go test -run X -bench BenchmarkSortedRead ./lake/
func BenchmarkSortedRead(b *testing.B) {
	const n = 500_000
	// Not testLake's checked allocator, which records a stack per
	// allocation.
	l, err := Open(Options{InMemory: true, Allocator: memory.NewGoAllocator()})
	require.NoError(b, err)
	defer l.Close()
	table := testTable(9, []metadata.Column{
		col("id", metadata.BigIntType()), col("v", metadata.BigIntType()), col("s", metadata.StringType()),
		col("d", metadata.DoubleType()), col("t", metadata.StringType()),
	}, []string{"id"}, nil)
	rows := make([][]any, n)
	newer := make([][]any, 0, n/2)
	for i := range rows {
		rows[i] = []any{int64(i), int64(i % 977), fmt.Sprintf("row %d", i), float64(i) / 3, "constant"}
		if i%2 == 0 {
			newer = append(newer, []any{int64(i), int64(-1), fmt.Sprintf("new %d", i), float64(i), "changed"})
		}
	}
	old := writeRows(b, l, table, "", nil, 1, rows)
	upd := writeRows(b, l, table, "", nil, 2, newer)
	for _, c := range []struct {
		name  string
		files []metadata.LakeFile
	}{{"single", []metadata.LakeFile{old}}, {"merged", []metadata.LakeFile{old, upd}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				sr, err := l.OpenSorted(bg, table, c.files, ReadOptions{Projection: []int{0, 1, 2, 3, 4}})
				require.NoError(b, err)
				got := 0
				for sr.Next() {
					rec, _ := sr.Batch()
					got += int(rec.NumRows())
				}
				require.NoError(b, sr.Err())
				sr.Close()
				require.Equal(b, n, got)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
		})
	}
}
