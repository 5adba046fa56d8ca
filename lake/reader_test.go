package lake

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

func simpleTable() *metadata.TableInfo {
	return testTable(3, []metadata.Column{
		col("id", metadata.BigIntType()),
		col("name", metadata.StringType()),
		col("score", metadata.DoubleType()),
	}, nil, nil)
}

func simpleRows(from, to int) [][]any {
	var rows [][]any
	for i := from; i < to; i++ {
		rows = append(rows, []any{int64(i), fmt.Sprintf("n%05d", i), float64(i) / 2})
	}
	return rows
}

// smash overwrites the bytes of column chunk col of every row group with
// garbage, in an in-memory lake.
func smash(t *testing.T, l *Lake, table *metadata.TableInfo, lf metadata.LakeFile, col int) {
	t.Helper()
	pf, err := l.openParquet(table, lf)
	require.NoError(t, err)
	type span struct{ off, n int64 }
	var spans []span
	for rg := 0; rg < pf.md.NumRowGroups(); rg++ {
		cc, err := pf.md.RowGroup(rg).ColumnChunk(pf.leaf[col])
		require.NoError(t, err)
		off := cc.DataPageOffset()
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() < off {
			off = cc.DictionaryPageOffset()
		}
		spans = append(spans, span{off, cc.TotalCompressedSize()})
	}
	pf.Close()
	m := l.fs.(*memFS)
	m.mu.Lock()
	defer m.mu.Unlock()
	name := l.abs(lf.Path)
	b := append([]byte(nil), m.files[name]...)
	for _, s := range spans {
		for i := s.off; i < s.off+s.n; i++ {
			b[i] = 0xA5
		}
	}
	m.files[name] = b
}

func TestProjectionReadsOnlyProjectedColumns(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := simpleTable()
	lf := writeRows(t, l, table, "", nil, 1, simpleRows(0, 50))

	// Output order is the projection's, not the table's.
	rr, err := l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{2, 0}})
	require.NoError(t, err)
	got := rowsOf(t, rr, []metadata.DataType{metadata.DoubleType(), metadata.BigIntType()})
	require.Len(t, got, 50)
	require.Equal(t, []any{3.5, int64(7)}, got[7])

	// With the name column's bytes destroyed, reads that leave it out
	// still work: it is never decoded.
	smash(t, l, table, lf, 1)
	rr, err = l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0, 2}})
	require.NoError(t, err)
	got = rowsOf(t, rr, []metadata.DataType{metadata.BigIntType(), metadata.DoubleType()})
	require.Len(t, got, 50)
	require.Equal(t, []any{int64(49), 24.5}, got[49])

	// Projecting it is ErrCorrupt naming the file.
	rr, err = l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{1}})
	require.NoError(t, err)
	for rr.Next() {
	}
	require.ErrorIs(t, rr.Err(), metadata.ErrCorrupt)
	require.Contains(t, rr.Err().Error(), lf.Path)
	require.NoError(t, rr.Close())

	// An empty projection counts rows without decoding any column.
	rr, err = l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{})
	require.NoError(t, err)
	n := 0
	for rr.Next() {
		require.Zero(t, rr.Record().NumCols())
		n += int(rr.Record().NumRows())
	}
	require.NoError(t, rr.Err())
	require.NoError(t, rr.Close())
	require.Equal(t, 50, n)
}

func TestRowGroupPruning(t *testing.T) {
	l, _ := testLake(t, true, func(o *Options) { o.RowGroupRows = 100 })
	table := simpleTable()
	lf := writeRows(t, l, table, "", nil, 1, simpleRows(0, 1000))
	pf, err := l.openParquet(table, lf)
	require.NoError(t, err)
	require.Equal(t, 10, pf.md.NumRowGroups())
	pf.Close()

	idGE := func(v int64) predicate.P {
		return &predicate.Leaf{Op: predicate.GtEq, Column: 0, Name: "id", Type: metadata.BigIntType(), Literals: []any{v}}
	}
	nameLT := &predicate.Leaf{Op: predicate.Lt, Column: 1, Name: "name", Type: metadata.StringType(), Literals: []any{"n00150"}}
	for _, tc := range []struct {
		name       string
		filter     predicate.P
		filterRows bool
		groups     int64
		rows       int
		first      int64
	}{
		{"no filter", nil, false, 10, 1000, 0},
		{"last group only", idGE(950), false, 1, 100, 900},
		{"last group, rows filtered", idGE(950), true, 1, 50, 950},
		{"nothing matches", idGE(5000), false, 0, 0, 0},
		{"string bound", nameLT, true, 2, 150, 0},
		{"or of both ends", &predicate.Or{Children: []predicate.P{idGE(990), nameLT}}, true, 3, 160, 0},
		{"not", &predicate.Not{Child: idGE(100)}, false, 1, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := l.rowGroupsRead.Load()
			rr, err := l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0}, Filter: tc.filter, FilterRows: tc.filterRows})
			require.NoError(t, err)
			got := rowsOf(t, rr, []metadata.DataType{metadata.BigIntType()})
			require.Equal(t, tc.groups, l.rowGroupsRead.Load()-before, "row groups read")
			require.Len(t, got, tc.rows)
			st := rr.(interface{ Stats() ReadStats }).Stats()
			require.Equal(t, ReadStats{RowGroups: tc.groups, RowGroupsSkipped: 10 - tc.groups, Rows: int64(tc.rows)}, st)
			if tc.rows > 0 {
				require.Equal(t, tc.first, got[0][0])
			}
		})
	}
}

func TestFilterRowsIsExact(t *testing.T) {
	l, _ := testLake(t, true, func(o *Options) { o.RowGroupRows = 64 })
	table := simpleTable()
	rows := simpleRows(0, 500)
	rows[10][1], rows[20][2] = nil, nil
	lf := writeRows(t, l, table, "", nil, 1, rows)
	filter := &predicate.Or{Children: []predicate.P{
		&predicate.Leaf{Op: predicate.IsNull, Column: 1, Name: "name", Type: metadata.StringType()},
		&predicate.And{Children: []predicate.P{
			&predicate.Leaf{Op: predicate.In, Column: 0, Name: "id", Type: metadata.BigIntType(), Literals: []any{int64(3), int64(300), int64(499)}},
			&predicate.Leaf{Op: predicate.Gt, Column: 2, Name: "score", Type: metadata.DoubleType(), Literals: []any{1.0}},
		}},
	}}
	rr, err := l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0}, Filter: filter, FilterRows: true})
	require.NoError(t, err)
	got := rowsOf(t, rr, []metadata.DataType{metadata.BigIntType()})
	require.Equal(t, [][]any{{int64(3)}, {int64(10)}, {int64(300)}, {int64(499)}}, got)
}

func TestNaNKeepsMaxUnknown(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := simpleTable()
	rows := simpleRows(0, 10)
	nan := 0.0
	rows[4][2] = nan / nan
	lf := writeRows(t, l, table, "", nil, 1, rows)
	// NaN sorts above every number, so score > 100 matches row 4 although
	// Parquet's max (NaN left out) is 4.5.
	filter := &predicate.Leaf{Op: predicate.Gt, Column: 2, Name: "score", Type: metadata.DoubleType(), Literals: []any{100.0}}
	rr, err := l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0}, Filter: filter, FilterRows: true})
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(4)}}, rowsOf(t, rr, []metadata.DataType{metadata.BigIntType()}))
}
