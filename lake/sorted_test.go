package lake

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// pkTable has a two-column primary key (k1 STRING, k2 INT) and a value.
func pkTable() *metadata.TableInfo {
	return testTable(11, []metadata.Column{
		col("k1", metadata.StringType()),
		col("v", metadata.StringType()),
		col("k2", metadata.IntType()),
	}, []string{"k1", "k2"}, nil)
}

func pkRow(k int, v string) []any {
	return []any{fmt.Sprintf("key%05d", k/10), v, int64(k % 10)}
}

func TestSortedMergeOverlappingFiles(t *testing.T) {
	l, _ := testLake(t, true, func(o *Options) { o.RowGroupRows = 500 })
	table := pkTable()
	// Snapshot 1: every even k in [0, 12000); snapshot 2: every k in
	// [3000, 9000) — overlapping the first file's key range; snapshot 3:
	// multiples of 7 in [8004, 20000), overlapping both.
	var a, b, c [][]any
	for k := 0; k < 12000; k += 2 {
		a = append(a, pkRow(k, "a"))
	}
	for k := 3000; k < 9000; k++ {
		b = append(b, pkRow(k, "b"))
	}
	for k := 8004; k < 20000; k += 7 {
		c = append(c, pkRow(k, "c"))
	}
	fa := writeRows(t, l, table, "", nil, 1, a)
	fb := writeRows(t, l, table, "", nil, 2, b)
	fc := writeRows(t, l, table, "", nil, 3, c)

	// The model: newer snapshots overwrite older ones.
	model := map[int]string{}
	for _, rows := range [][][]any{a, b, c} {
		for _, r := range rows {
			k := 0
			fmt.Sscanf(r[0].(string), "key%d", &k)
			model[k*10+int(r[2].(int64))] = r[1].(string)
		}
	}
	keys := make([]int, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	types := []metadata.DataType{metadata.StringType(), metadata.IntType(), metadata.StringType()}
	read := func(files []metadata.LakeFile, opts ReadOptions) ([][]any, [][]byte, int) {
		sr, err := l.OpenSorted(bg, table, files, opts)
		require.NoError(t, err)
		defer sr.Close()
		var rows [][]any
		var keys [][]byte
		batches := 0
		for sr.Next() {
			rec, ks := sr.Batch()
			require.Equal(t, int(rec.NumRows()), len(ks))
			require.LessOrEqual(t, int(rec.NumRows()), readBatchRows)
			batches++
			for i := 0; i < int(rec.NumRows()); i++ {
				row := make([]any, rec.NumCols())
				for c := range row {
					row[c] = metadata.ValueAt(rec.Column(c), types[c], i)
				}
				rows = append(rows, row)
				keys = append(keys, ks[i])
			}
		}
		require.NoError(t, sr.Err())
		return rows, keys, batches
	}
	opts := ReadOptions{Projection: []int{0, 2, 1}}
	for _, order := range [][]metadata.LakeFile{{fa, fb, fc}, {fc, fa, fb}, {fb, fc, fa}} {
		rows, enc, batches := read(order, opts)
		require.Greater(t, batches, 1)
		want := make([][]any, len(keys))
		wantKeys := make([][]byte, len(keys))
		for i, k := range keys {
			want[i] = []any{fmt.Sprintf("key%05d", k/10), int64(k % 10), model[k]}
			var err error
			wantKeys[i], err = metadata.EncodeOrderedKey([]metadata.DataType{metadata.StringType(), metadata.IntType()}, want[i][:2])
			require.NoError(t, err)
		}
		require.Equal(t, want, rows)
		require.Equal(t, wantKeys, enc)
	}

	// The filter applies to the surviving version: keys whose newest
	// value is "a" only, never an older "a" that "b" or "c" replaced.
	isA := &predicate.Leaf{Op: predicate.Eq, Column: 1, Name: "v", Type: metadata.StringType(), Literals: []any{"a"}}
	rows, _, _ := read([]metadata.LakeFile{fa, fb, fc}, ReadOptions{Projection: []int{1}, Filter: isA, FilterRows: true})
	wantA := 0
	for _, v := range model {
		if v == "a" {
			wantA++
		}
	}
	require.Len(t, rows, wantA)
	for _, r := range rows {
		require.Equal(t, "a", r[0])
	}

	// Overlapping files are never pruned by statistics: v = 'b' keeps
	// file a's row groups too, and the result holds only surviving b rows.
	isB := &predicate.Leaf{Op: predicate.Eq, Column: 1, Name: "v", Type: metadata.StringType(), Literals: []any{"b"}}
	rows, _, _ = read([]metadata.LakeFile{fa, fb, fc}, ReadOptions{Projection: []int{}, Filter: isB, FilterRows: true})
	wantB := 0
	for _, v := range model {
		if v == "b" {
			wantB++
		}
	}
	require.Len(t, rows, wantB)
}

func TestSortedDisjointFilesPrune(t *testing.T) {
	l, _ := testLake(t, true, func(o *Options) { o.RowGroupRows = 100 })
	table := pkTable()
	var a, b [][]any
	for k := 0; k < 1000; k++ {
		a = append(a, pkRow(k, "a"))
		b = append(b, pkRow(k+1000, "b"))
	}
	fa := writeRows(t, l, table, "", nil, 1, a)
	fb := writeRows(t, l, table, "", nil, 1, b)
	require.Equal(t, "11/data/-/b0/1-1.parquet", fb.Path)
	k1 := &predicate.Leaf{Op: predicate.Eq, Column: 0, Name: "k1", Type: metadata.StringType(), Literals: []any{"key00150"}}
	before := l.rowGroupsRead.Load()
	sr, err := l.OpenSorted(bg, table, []metadata.LakeFile{fa, fb}, ReadOptions{Projection: []int{2}, Filter: k1, FilterRows: true})
	require.NoError(t, err)
	n := 0
	for sr.Next() {
		rec, _ := sr.Batch()
		n += int(rec.NumRows())
	}
	require.NoError(t, sr.Err())
	require.NoError(t, sr.Close())
	require.Equal(t, 10, n)
	require.Equal(t, int64(1), l.rowGroupsRead.Load()-before)
}

func TestWriterRefusesUnsortedKeys(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := pkTable()
	w, err := l.NewFileWriter(table, "", nil, 0, 1)
	require.NoError(t, err)
	rec := record(t, l.opts.Allocator, table, 0, [][]any{pkRow(5, "x"), pkRow(3, "y")})
	err = w.Write(rec)
	rec.Release()
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.NoError(t, w.Abort())
	_, err = l.fs.Open(l.abs(w.Path()))
	require.True(t, isNotExist(err), "aborted file removed")

	// Duplicate keys across batches are refused too.
	w, err = l.NewFileWriter(table, "", nil, 0, 1)
	require.NoError(t, err)
	rec = record(t, l.opts.Allocator, table, 0, [][]any{pkRow(1, "x")})
	require.NoError(t, w.Write(rec))
	require.ErrorIs(t, w.Write(rec), metadata.ErrInvalidValue)
	rec.Release()
	require.NoError(t, w.Abort())
}
