package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// A transaction reads its own writes: every read of a table it wrote lays
// the buffered writes (storage.TableDelta) over the view. A scan goes
// through txOverlay; a point lookup and the batched lookups of a lookup
// join answer a buffered key from the buffer and only the others from the
// view. A read of a table the transaction did not write, and every read
// outside a transaction or in a read-only one, has no delta and pays
// nothing.
//
// The virtual tables read the view alone: t$changelog is the log of
// committed changes, each with its offset and commit time, which buffered
// writes do not have until Commit gives them; t$lake is what tiering has
// written to the lake, which buffered writes never are before Commit.

// txDelta is a transaction's buffered writes to one table as a read lays
// them over the view.
type txDelta struct {
	storage.TableDelta
	table *metadata.TableInfo
	keyer *storage.DeltaKeyer // primary-key tables only
}

// delta returns the session's buffered writes to the table sp reads, nil
// when there are none to lay over the view (see above).
func (s *Session) delta(sp *sqlplan.SelectPlan) (*txDelta, error) {
	if sp.Virtual != "" || !sp.From || sp.Source != nil {
		return nil, nil
	}
	return s.tableDelta(&sp.Table)
}

// tableDelta returns the session's buffered writes to a table, nil when
// there are none.
func (s *Session) tableDelta(table *metadata.TableInfo) (*txDelta, error) {
	if s.Writes == nil {
		return nil, nil
	}
	d, ok, err := s.Writes.Delta(table)
	if err != nil || !ok {
		return nil, err
	}
	td := &txDelta{TableDelta: d, table: table}
	if table.HasPrimaryKey() {
		td.keyer = storage.NewDeltaKeyer(table)
	}
	return td, nil
}

// lookupKey reads the row of the key held in the primary-key columns of
// keyRow as the session sees it: in a transaction its buffered writes d
// (nil: none) answer a key they touched and its view the others; outside
// one the live state answers. Errors are Engine.Lookup's
// (storage.ErrLookupInLake among them).
func (s *Session) lookupKey(ctx context.Context, table *metadata.TableInfo, d *txDelta, keyRow []any) ([]any, bool, error) {
	if d != nil {
		row, hit, err := d.lookup(keyRow)
		if err != nil || hit {
			return row, row != nil, err
		}
	}
	if v := s.View; v != nil {
		return v.Lookup(ctx, table.Path, keyRow)
	}
	return s.Engine.Lookup(ctx, table.Path, keyRow)
}

// fit returns a buffered row at the table's width: a row buffered before
// another connection added a column reads NULL in it, as a stored row does.
func (d *txDelta) fit(row []any) []any {
	if n := len(d.table.Schema.Columns); len(row) < n {
		return append(slices.Clip(row), make([]any, n-len(row))...)
	}
	return row
}

// lookup answers a point lookup of the key held in the primary-key
// columns of keyRow from the buffer: hit is false when no buffered write
// touched the key (the view answers), row nil when they deleted it.
func (d *txDelta) lookup(keyRow []any) (row []any, hit bool, err error) {
	k, err := d.keyer.Key(func(c int) any { return keyRow[c] })
	if err != nil {
		return nil, false, err
	}
	row, hit = d.Keys[string(k)]
	if row != nil {
		row = d.fit(row)
	}
	return row, hit, nil
}

// rows returns the buffered rows that pass the scan's partition filter
// and pushed predicate, exactly as stored rows do above the scan: a key
// table's live buffered rows in key order, a log table's appended rows in
// order.
func (d *txDelta) rows(partitionFilter, pushed predicate.P) [][]any {
	var out [][]any
	keep := func(row []any) {
		row = d.fit(row)
		if predicate.Test(partitionFilter, rowValues(row)) && predicate.Test(pushed, rowValues(row)) {
			out = append(out, row)
		}
	}
	if d.keyer == nil {
		for _, row := range d.Appended {
			keep(row)
		}
		return out
	}
	keys := make([]string, 0, len(d.Keys))
	for k, row := range d.Keys {
		if row != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		keep(d.Keys[k])
	}
	return out
}

// explain is the EXPLAIN line that says a read lays the buffered writes
// over the view.
func (d *txDelta) explain() string {
	if d.keyer == nil {
		return fmt.Sprintf("TxOverlay: %d rows (this transaction's buffered appends, read after the view's rows)", len(d.Appended))
	}
	deleted := 0
	for _, row := range d.Keys {
		if row == nil {
			deleted++
		}
	}
	return fmt.Sprintf("TxOverlay: %d rows (this transaction's buffered writes by primary key: %d upserted, %d deleted, replacing the view's rows of those keys)",
		len(d.Keys), len(d.Keys)-deleted, deleted)
}

// rowValues is a predicate.Row over a full-schema row.
type rowValues []any

func (r rowValues) Value(c int) any {
	if c < 0 || c >= len(r) {
		return nil
	}
	return r[c]
}

// txOverlay lays a transaction's buffered writes to one table over the
// scan of its view: for a primary-key table it drops every row of the
// scan whose key the buffer holds (changed, deleted, or changed so that a
// pushed filter no longer keeps it), then yields the buffered rows that
// pass the scan's filters; for a log table it yields the scan's rows, then
// the buffered appends that pass. Its records are the scan's: the columns
// of layout, which holds every primary-key column for a key table.
type txOverlay struct {
	in     exec.Operator
	delta  *txDelta
	layout exec.Layout
	types  []metadata.DataType
	// tail holds the buffered rows, projected as the scan's records; nil
	// when none passes. Released by Close.
	tail   arrow.RecordBatch
	inDone bool
	sent   bool
	// first holds the values of the first primary-key column among the
	// buffered keys, for a column of integers or strings: a row whose
	// first key value is none of them is not buffered, which rules out
	// most rows of a scan without encoding their keys. nil: no such test.
	first *firstKeys
}

// firstKeys is a set of first key values, of integers or of strings.
type firstKeys struct {
	col  int // the table column
	ints map[int64]struct{}
	strs map[string]struct{}
}

// newFirstKeys collects the first key values of the buffered keys; nil
// when the first key column is of another type.
func newFirstKeys(d *txDelta) (*firstKeys, error) {
	pk := d.table.PrimaryKeyIndexes()
	types := make([]metadata.DataType, len(pk))
	for i, c := range pk {
		types[i] = d.table.Schema.Columns[c].Type
	}
	f := &firstKeys{col: pk[0]}
	switch types[0].Root {
	case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt:
		f.ints = make(map[int64]struct{}, len(d.Keys))
	case metadata.Char, metadata.String:
		f.strs = make(map[string]struct{}, len(d.Keys))
	default:
		return nil, nil
	}
	for k := range d.Keys {
		vals, err := metadata.DecodeOrderedKey(types, []byte(k))
		if err != nil {
			return nil, fmt.Errorf("buffered key of %s: %w", d.table.Path, err)
		}
		switch v := vals[0].(type) {
		case int64:
			f.ints[v] = struct{}{}
		case string:
			f.strs[v] = struct{}{}
		}
	}
	return f, nil
}

// test returns the test of row i of arr, the first key column of a
// batch: false when no buffered key has its value. nil when arr is not of
// the expected kind.
func (f *firstKeys) test(arr arrow.Array) func(i int) bool {
	ints := func(v int64) bool { _, ok := f.ints[v]; return ok }
	switch a := arr.(type) {
	case *array.Int8:
		return func(i int) bool { return ints(int64(a.Value(i))) }
	case *array.Int16:
		return func(i int) bool { return ints(int64(a.Value(i))) }
	case *array.Int32:
		return func(i int) bool { return ints(int64(a.Value(i))) }
	case *array.Int64:
		return func(i int) bool { return ints(a.Value(i)) }
	case *array.String:
		if f.strs == nil {
			return nil
		}
		return func(i int) bool { _, ok := f.strs[a.Value(i)]; return ok }
	}
	return nil
}

// newTxOverlay wraps the scan in of a plan whose table the transaction
// wrote; proj are the table columns in's records hold, in order.
func newTxOverlay(in exec.Operator, p *scanPlan, proj []int) (*txOverlay, error) {
	d := p.delta
	cols := d.table.Schema.Columns
	o := &txOverlay{in: in, delta: d, layout: exec.NewLayout(len(cols), proj)}
	for _, c := range cols {
		o.types = append(o.types, c.Type)
	}
	if d.keyer != nil {
		var err error
		if o.first, err = newFirstKeys(d); err != nil {
			return nil, err
		}
	}
	rows := d.rows(p.pd.PartitionFilter, p.pd.Pushed)
	if len(rows) == 0 {
		return o, nil
	}
	projected := make([][]any, len(rows))
	for r, row := range rows {
		out := make([]any, len(proj))
		for i, c := range proj {
			out[i] = row[c]
		}
		projected[r] = out
	}
	outCols := make([]metadata.Column, len(proj))
	for i, c := range proj {
		outCols[i] = cols[c]
	}
	tail, err := BuildRecord(outCols, projected)
	if err != nil {
		return nil, fmt.Errorf("buffered rows of %s: %w", d.table.Path, err)
	}
	o.tail = tail
	return o, nil
}

func (o *txOverlay) Next(ctx context.Context) (exec.Batch, error) {
	for !o.inDone {
		b, err := o.in.Next(ctx)
		if errors.Is(err, io.EOF) {
			o.inDone = true
			break
		}
		if err != nil {
			return exec.Batch{}, err
		}
		if o.delta.keyer == nil {
			return b, nil
		}
		if b, err = o.hide(b); err != nil {
			return exec.Batch{}, err
		}
		if b.NumRows() > 0 {
			return b, nil
		}
	}
	if o.tail != nil && !o.sent {
		o.sent = true
		return exec.Batch{Rec: o.tail}, nil
	}
	return exec.Batch{}, io.EOF
}

// hide drops the rows of b whose key the buffer holds. A batch none of
// whose keys is buffered passes as it is.
func (o *txOverlay) hide(b exec.Batch) (exec.Batch, error) {
	rec := b.Rec
	n := int(rec.NumRows())
	var sel []int32
	dropped := false
	var maybe func(int) bool
	if o.first != nil {
		maybe = o.first.test(rec.Column(o.layout[o.first.col]))
	}
	for i := 0; i < b.NumRows(); i++ {
		row := i
		if b.Sel != nil {
			row = int(b.Sel[i])
		}
		if maybe != nil && !maybe(row) {
			if dropped {
				sel = append(sel, int32(row))
			}
			continue
		}
		k, err := o.delta.keyer.Key(func(c int) any {
			return metadata.ValueAt(rec.Column(o.layout[c]), o.types[c], row)
		})
		if err != nil {
			return exec.Batch{}, fmt.Errorf("row of %s: %w", o.delta.table.Path, err)
		}
		if _, buffered := o.delta.Keys[string(k)]; buffered {
			if !dropped {
				dropped = true
				sel = make([]int32, 0, n)
				for j := 0; j < i; j++ {
					sel = append(sel, selRow(b.Sel, j))
				}
			}
			continue
		}
		if dropped {
			sel = append(sel, int32(row))
		}
	}
	if !dropped {
		return b, nil
	}
	return exec.Batch{Rec: rec, Sel: sel}, nil
}

// selRow is the record row of visible row j of a batch with selection sel.
func selRow(sel []int32, j int) int32 {
	if sel != nil {
		return sel[j]
	}
	return int32(j)
}

func (o *txOverlay) Close() error {
	err := o.in.Close()
	if o.tail != nil {
		o.tail.Release()
		o.tail = nil
	}
	return err
}

// overlayKeyRows splits the key rows of a batched lookup into those the
// buffer answers (their live buffered rows, each key once) and those the
// view must.
func (d *txDelta) overlayKeyRows(keyRows [][]any) (buffered, rest [][]any, err error) {
	seen := map[string]bool{}
	for _, kr := range keyRows {
		k, err := d.keyer.Key(func(c int) any { return kr[c] })
		if err != nil {
			return nil, nil, err
		}
		row, hit := d.Keys[string(k)]
		if !hit {
			rest = append(rest, kr)
			continue
		}
		if row == nil || seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		buffered = append(buffered, d.fit(row))
	}
	return buffered, rest, nil
}
