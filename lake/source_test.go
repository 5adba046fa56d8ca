package lake

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

func leaf(op predicate.Op, table *metadata.TableInfo, name string, lits ...any) *predicate.Leaf {
	i := table.Schema.ColumnIndex(name)
	return &predicate.Leaf{Op: op, Column: i, Name: name, Type: table.Schema.Columns[i].Type, Literals: lits}
}

func TestSourceWithFilters(t *testing.T) {
	table := testTable(4, []metadata.Column{
		col("id", metadata.BigIntType()),
		col("raw", metadata.BytesType()),
		col("tags", metadata.ArrayType(metadata.StringType())),
		col("at", metadata.TimestampLTZType(3)),
	}, nil, nil)
	l, _ := testLake(t, true, nil)
	src := l.Source(table)
	onID := leaf(predicate.Gt, table, "id", int64(1))
	onAt := leaf(predicate.IsNotNull, table, "at")
	onRaw := leaf(predicate.Eq, table, "raw", []byte("x"))
	onTags := leaf(predicate.IsNull, table, "tags")
	mixed := &predicate.Or{Children: []predicate.P{onID, onRaw}}
	acc, rem := src.WithFilters([]predicate.P{onID, onRaw, onAt, onTags, mixed})
	require.Equal(t, []predicate.P{onID, onAt}, acc)
	require.Equal(t, []predicate.P{onRaw, onTags, mixed}, rem)
}

func TestSourcePlan(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := testTable(9, []metadata.Column{
		col("id", metadata.BigIntType()),
		col("dt", metadata.StringType()),
		col("n", metadata.IntType()),
	}, nil, []string{"dt", "n"})
	var files []metadata.LakeFile
	for p, part := range [][]string{{"2026-01-01", "10"}, {"2026-01-02", "2"}} {
		for f := range 2 {
			var rows [][]any
			lo := p*1000 + f*100
			for id := lo; id < lo+100; id++ {
				rows = append(rows, []any{int64(id), part[0], int64(len(part[1]))})
			}
			files = append(files, writeRows(t, l, table, metadata.PartitionName(part), part, 1, rows))
		}
	}
	require.Equal(t, "9/data/2026-01-01$10/b0/1-1.parquet", files[1].Path)
	require.NoError(t, l.Commit(bg, Manifest{SnapshotID: 1, TableID: table.TableID, Files: files}))
	src := l.Source(table)
	plan := func(pf predicate.P, filters ...predicate.P) []string {
		got, err := src.Plan(bg, 1, pf, filters)
		require.NoError(t, err)
		var paths []string
		for _, f := range got {
			paths = append(paths, f.Path)
		}
		return paths
	}
	day1 := []string{files[0].Path, files[1].Path}
	require.Equal(t, day1, plan(leaf(predicate.Eq, table, "dt", "2026-01-01")))
	// Partition values compare typed: INT 10 > 2.
	require.Equal(t, day1, plan(leaf(predicate.Gt, table, "n", int64(5))))
	require.Equal(t, []string{files[1].Path, files[2].Path}, plan(nil, leaf(predicate.GtEq, table, "id", int64(150)), &predicate.Not{Child: leaf(predicate.GtEq, table, "id", int64(1050))}))
	require.Equal(t, []string{files[3].Path}, plan(leaf(predicate.Eq, table, "dt", "2026-01-02"), leaf(predicate.GtEq, table, "id", int64(1150))))
	require.Empty(t, plan(nil, leaf(predicate.Lt, table, "id", int64(0))))
	require.Len(t, plan(nil), 4)

	_, err := src.Plan(bg, 2, nil, nil)
	require.ErrorIs(t, err, metadata.ErrNotFound)
	_, err = src.Plan(bg, 1, leaf(predicate.Eq, table, "id", int64(1)), nil)
	require.ErrorIs(t, err, metadata.ErrUnsupported, "a partition filter on a data column")
}

func TestSourcePlanKeyTable(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := pkTable()
	write := func(snap int64, from, to int, v string) metadata.LakeFile {
		var rows [][]any
		for k := from; k < to; k++ {
			rows = append(rows, pkRow(k, v))
		}
		return writeRows(t, l, table, "", nil, snap, rows)
	}
	isB := leaf(predicate.Eq, table, "v", "b")

	// Disjoint key ranges: a file without "b" values is pruned.
	fa, fb := write(1, 0, 100, "a"), write(1, 100, 200, "b")
	require.NoError(t, l.Commit(bg, Manifest{SnapshotID: 1, TableID: table.TableID, Files: []metadata.LakeFile{fa, fb}}))
	got, err := l.Source(table).Plan(bg, 1, nil, []predicate.P{isB})
	require.NoError(t, err)
	require.Equal(t, []metadata.LakeFile{fb}, got)

	// Overlapping ranges: pruning the "a" file would bring back older
	// versions its keys replaced, so the bucket keeps every file.
	fc := write(2, 50, 150, "a")
	require.NoError(t, l.Commit(bg, Manifest{SnapshotID: 2, TableID: table.TableID, Files: []metadata.LakeFile{fa, fb, fc}}))
	got, err = l.Source(table).Plan(bg, 2, nil, []predicate.P{leaf(predicate.Eq, table, "v", "zzz")})
	require.NoError(t, err)
	require.Len(t, got, 3, fmt.Sprint(got))
}
