package lake

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// Files written under three schema ids of one table (each adding a
// column) read with the newest: the columns a file lacks are NULL, in
// every projection and with the system columns, and a filter on a column
// a file lacks skips it by its statistics.
func TestFilesOfEarlierSchemas(t *testing.T) {
	l, mem := testLake(t, true, nil)
	defer mem.AssertSize(t, 0)
	v1 := testTable(7, []metadata.Column{col("id", metadata.BigIntType()), col("a", metadata.StringType())}, nil, nil)
	v1.SchemaID = 1
	v2, err := metadata.AddColumns(*v1, []metadata.Column{col("b", metadata.IntType())})
	require.NoError(t, err)
	v3, err := metadata.AddColumns(v2, []metadata.Column{col("c", metadata.DoubleType())})
	require.NoError(t, err)
	require.Equal(t, int32(3), v3.SchemaID)

	f1 := writeRows(t, l, v1, "", nil, 1, [][]any{{int64(1), "x"}, {int64(2), nil}})
	f2 := writeRows(t, l, &v2, "", nil, 2, [][]any{{int64(3), "y", int64(30)}})
	f3 := writeRows(t, l, &v3, "", nil, 3, [][]any{{int64(4), "z", nil, 4.5}, {int64(5), nil, int64(50), nil}})
	files := []metadata.LakeFile{f1, f2, f3}
	ctx := context.Background()
	types := []metadata.DataType{metadata.BigIntType(), metadata.StringType(), metadata.IntType(), metadata.DoubleType()}

	r, err := l.OpenFiles(ctx, &v3, files, ReadOptions{Projection: []int{0, 1, 2, 3}, Allocator: mem})
	require.NoError(t, err)
	require.Equal(t, [][]any{
		{int64(1), "x", nil, nil},
		{int64(2), nil, nil, nil},
		{int64(3), "y", int64(30), nil},
		{int64(4), "z", nil, 4.5},
		{int64(5), nil, int64(50), nil},
	}, rowsOf(t, r, types))

	// Only added columns, then only old ones with a new one between.
	r, err = l.OpenFiles(ctx, &v3, files, ReadOptions{Projection: []int{3, 2}, Allocator: mem})
	require.NoError(t, err)
	require.Equal(t, [][]any{{nil, nil}, {nil, nil}, {nil, int64(30)}, {4.5, nil}, {nil, int64(50)}}, rowsOf(t, r, []metadata.DataType{types[3], types[2]}))

	r, err = l.OpenFiles(ctx, &v3, files, ReadOptions{Projection: []int{0, 2}, WithSystemColumns: true, Allocator: mem})
	require.NoError(t, err)
	rows := rowsOf(t, r, []metadata.DataType{types[0], types[2], metadata.IntType(), metadata.BigIntType(), metadata.TimestampLTZType(3)})
	require.Len(t, rows, 5)
	require.Equal(t, []any{int64(1), nil}, rows[0][:2])
	require.Equal(t, int64(0), rows[0][3], "the system columns after the added ones")

	// A filter on c skips the files written before c was added.
	isC := &predicate.Leaf{Op: predicate.Eq, Column: 3, Name: "c", Type: metadata.DoubleType(), Literals: []any{4.5}}
	r, err = l.OpenFiles(ctx, &v3, files, ReadOptions{Projection: []int{0}, Filter: isC, FilterRows: true, Allocator: mem})
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(4)}}, rowsOf(t, r, types[:1]))
	require.Equal(t, int64(2), r.(interface{ Stats() ReadStats }).Stats().RowGroupsSkipped)

	// A file whose data columns no schema of the table had is corrupt.
	_, err = l.OpenFiles(ctx, v1, []metadata.LakeFile{f3}, ReadOptions{Projection: []int{0, 1}, Allocator: mem})
	if err == nil {
		r, _ := l.OpenFiles(ctx, v1, []metadata.LakeFile{f3}, ReadOptions{Projection: []int{0, 1}, Allocator: mem})
		for r.Next() {
		}
		err = r.Err()
		r.Close()
	}
	require.ErrorIs(t, err, metadata.ErrCorrupt)
}
