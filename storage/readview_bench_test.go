package storage

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// BenchmarkReadView measures the cut of a read view in an engine whose
// tables have 1 and 400 buckets in all, each with a row: the cost of every
// transaction's Begin and every query's view.
//
//	go test -run X -bench BenchmarkReadView ./storage
func BenchmarkReadView(b *testing.B) {
	for _, buckets := range []int{1, 400} {
		b.Run(fmt.Sprintf("buckets=%d", buckets), func(b *testing.B) {
			e, _ := testEngine(b, "", nil)
			_, err := e.CreateTable(ctx, metadata.TableDescriptor{
				Path:    path("t"),
				Schema:  metadata.Schema{Columns: []metadata.Column{col("i", metadata.BigIntType())}},
				Options: map[string]string{metadata.OptBucketNum: fmt.Sprint(buckets)},
			}, false)
			require.NoError(b, err)
			rows := make([][]any, buckets)
			for i := range rows {
				rows[i] = []any{int64(i)}
			}
			_, err = e.Commit(ctx, []Write{{Path: path("t"), Kind: WriteAppend, Rows: rows}})
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				v, err := e.WriteView(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if _, stop := v.LogOffsets(metadata.TableBucket{TableID: 1, PartitionID: metadata.NonPartitioned}); stop < 0 {
					b.Fatal("negative high watermark")
				}
				if err := v.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
