package lake

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// ReadOptions say what a reader returns.
type ReadOptions struct {
	// Projection lists the table columns to return, in output order; it
	// may be empty (batches then carry only a row count).
	Projection []int
	// Filter skips files and row groups whose Parquet statistics prove
	// that no row matches. Column indexes are table column indexes.
	Filter predicate.P
	// FilterRows also drops every row for which Filter is not TRUE.
	FilterRows bool
	// WithSystemColumns appends __bucket, __offset and __timestamp after
	// the projected columns.
	WithSystemColumns bool
	// Allocator backs the returned batches; nil: the lake's allocator.
	Allocator memory.Allocator
}

// RecordReader returns record batches of the projected columns. It is not
// safe for concurrent use and must be closed. A batch is valid until the
// next call to Next or Close; Retain it to keep it.
type RecordReader interface {
	Next() bool
	Record() arrow.RecordBatch
	Err() error
	Close() error
}

// SortedReader returns the rows of a primary-key table's bucket in
// ascending order of their encoded physical key, one row per key. Batch
// returns the projected columns and, per row, metadata.EncodeOrderedKey
// of its physical key; both are valid until the next call to Next or
// Close. It is not safe for concurrent use and must be closed.
type SortedReader interface {
	Next() bool
	Batch() (rec arrow.RecordBatch, keys [][]byte)
	Err() error
	Close() error
}

// readPlan is what a reader derives from ReadOptions for one table.
type readPlan struct {
	table *metadata.TableInfo
	opts  ReadOptions
	mem   memory.Allocator
	// need are the file columns read, ascending.
	need []int
	// out are the file columns returned, in output order.
	out       []int
	outSchema *arrow.Schema
	// filterCols are the columns Filter reads (for statistics).
	filterCols []int
	// sysBase is the file column index of the first system column.
	sysBase int
	// stats count the row groups the reader decodes and those its filter
	// skips, and the rows it returns.
	stats ReadStats
}

// ReadStats count what a reader read: the Parquet row groups it decoded
// and those the filter's statistics test skipped, and the rows it
// returned. Batches are always zero: the lake has no record batches. The
// shape is storage.ReadStats', so the reader of both converts one into the
// other.
type ReadStats struct {
	Batches, BatchesSkipped     int64
	RowGroups, RowGroupsSkipped int64
	Rows                        int64
}

func newReadPlan(l *Lake, table *metadata.TableInfo, opts ReadOptions, extra []int) (*readPlan, error) {
	p := &readPlan{table: table, opts: opts, mem: opts.Allocator, sysBase: len(table.Schema.Columns)}
	if p.mem == nil {
		p.mem = l.opts.Allocator
	}
	ncols := len(table.Schema.Columns)
	for _, c := range opts.Projection {
		if c < 0 || c >= ncols {
			return nil, fmt.Errorf("%w: lake: projected column %d of %s is out of range", metadata.ErrInvalidValue, c, table.Path)
		}
		p.out = append(p.out, c)
	}
	if opts.WithSystemColumns {
		for i := range numSystemColumns {
			p.out = append(p.out, p.sysBase+i)
		}
	}
	p.filterCols = predicate.Columns(opts.Filter)
	for _, c := range p.filterCols {
		if c < 0 || c >= ncols {
			return nil, fmt.Errorf("%w: lake: filter %s reads column %d, out of range for %s", metadata.ErrInvalidValue, opts.Filter, c, table.Path)
		}
	}
	need := slices.Clone(p.out)
	if opts.FilterRows {
		need = append(need, p.filterCols...)
	}
	need = append(need, extra...)
	slices.Sort(need)
	p.need = slices.Compact(need)

	cols := fileColumns(table)
	fields := make([]arrow.Field, len(p.out))
	for i, c := range p.out {
		fields[i] = arrow.Field{Name: cols[c].Name, Type: cols[c].Type.ArrowType(), Nullable: !cols[c].NotNull}
	}
	p.outSchema = arrow.NewSchema(fields, nil)
	return p, nil
}

// batch is one decoded batch of a file: arrays by file column (nil for
// columns not read) in the engine's Arrow types.
type batch struct {
	cols []arrow.Array
	rows int
}

func (b *batch) release() {
	for _, c := range b.cols {
		if c != nil {
			c.Release()
		}
	}
	b.cols = nil
}

// arrowRow is a predicate.Row over one row of a batch, by table column.
type arrowRow struct {
	b    *batch
	cols []metadata.Column
	i    int
}

func (r *arrowRow) Value(c int) any {
	if c < 0 || c >= len(r.b.cols) || r.b.cols[c] == nil {
		return nil
	}
	return metadata.ValueAt(r.b.cols[c], r.cols[c].Type, r.i)
}

// fileStream decodes the selected row groups of one file, batch by batch.
type fileStream struct {
	l    *Lake
	pf   *parquetFile
	plan *readPlan
	rr   pqarrow.RecordReader
	// countOnly: no column is read, batches are row counts of groups.
	groups    []int
	countOnly bool
	next      int // next group, count-only mode
	// read are the needed columns the file has (the plan's need but for
	// columns added after it was written); engine their Arrow types.
	read   []int
	engine []arrow.DataType
}

// openStream opens lf and starts decoding the row groups the plan's
// filter cannot rule out; nil (and no error) when none is left.
func (l *Lake) openStream(ctx context.Context, plan *readPlan, lf metadata.LakeFile) (*fileStream, error) {
	pf, err := l.openParquet(plan.table, lf)
	if err != nil {
		return nil, err
	}
	return l.streamOf(ctx, plan, pf, true)
}

// streamOf starts decoding pf, which it then owns. prune false reads every
// row group whatever the filter.
func (l *Lake) streamOf(ctx context.Context, plan *readPlan, pf *parquetFile, prune bool) (s *fileStream, err error) {
	s = &fileStream{l: l, pf: pf, plan: plan}
	defer func() {
		if r := recover(); r != nil {
			err = corrupt(pf.rel, r)
		}
		if err != nil {
			s.close()
			s = nil
		}
	}()
	for rg := 0; rg < pf.md.NumRowGroups(); rg++ {
		if prune && plan.opts.Filter != nil && !predicate.MaybeTest(plan.opts.Filter, pf.groupStats(plan.table, rg, plan.filterCols)) {
			plan.stats.RowGroupsSkipped++
			continue
		}
		if pf.md.RowGroup(rg).NumRows() > 0 {
			s.groups = append(s.groups, rg)
		}
	}
	plan.stats.RowGroups += int64(len(s.groups))
	if len(s.groups) == 0 {
		s.close()
		return nil, nil
	}
	for _, c := range plan.need {
		// UndoSameColumn, past a data file's columns, is read from undo
		// files only.
		if c < len(pf.cols) && !pf.missing[c] {
			s.read = append(s.read, c)
		}
	}
	if len(s.read) == 0 {
		s.countOnly = true
		return s, nil
	}
	fr, err := pqarrow.NewFileReader(pf.pr, pqarrow.ArrowReadProperties{BatchSize: readBatchRows}, plan.mem)
	if err != nil {
		return nil, corrupt(pf.rel, err)
	}
	var leaves []int
	for _, c := range s.read {
		leaves = append(leaves, pf.leaves[c]...)
	}
	slices.Sort(leaves)
	rr, err := fr.GetRecordReader(ctx, leaves, s.groups)
	if err != nil {
		return nil, corrupt(pf.rel, err)
	}
	s.rr = rr
	sc := rr.Schema()
	if sc.NumFields() != len(s.read) {
		return nil, corrupt(pf.rel, fmt.Sprintf("read %d columns, asked for %d", sc.NumFields(), len(s.read)))
	}
	for i, c := range s.read {
		want := pf.cols[c].Type.ArrowType()
		if got := sc.Field(i).Type; !convertible(got, want) {
			return nil, corrupt(pf.rel, fmt.Sprintf("column %s has Arrow type %s, want %s", pf.cols[c].Name, got, want))
		}
		s.engine = append(s.engine, want)
	}
	l.rowGroupsRead.Add(int64(len(s.groups)))
	return s, nil
}

// nextBatch decodes the next batch; ok false at the end or on error.
func (s *fileStream) nextBatch(ctx context.Context) (b *batch, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	b = &batch{cols: make([]arrow.Array, len(s.pf.cols))}
	if s.countOnly {
		if s.next >= len(s.groups) {
			return nil, false, nil
		}
		b.rows = int(s.pf.md.RowGroup(s.groups[s.next]).NumRows())
		s.next++
		s.l.rowGroupsRead.Add(1)
		s.nullMissing(b)
		return b, true, nil
	}
	defer func() {
		if r := recover(); r != nil {
			b.release()
			b, ok, err = nil, false, corrupt(s.pf.rel, r)
		}
	}()
	if !s.rr.Next() {
		if err := s.rr.Err(); err != nil {
			return nil, false, corrupt(s.pf.rel, err)
		}
		return nil, false, nil
	}
	rec := s.rr.RecordBatch()
	b.rows = int(rec.NumRows())
	for i, c := range s.read {
		b.cols[c] = convert(s.plan.mem, rec.Column(i), s.engine[i])
	}
	s.nullMissing(b)
	return b, true, nil
}

// nullMissing gives b the columns the plan needs that the file lacks
// (added to the table after it was written): their pad value in every
// row, NULL or the column's default (metadata.Column.PadValue).
func (s *fileStream) nullMissing(b *batch) {
	if len(s.read) == len(s.plan.need) {
		return
	}
	for _, c := range s.plan.need {
		if c >= len(s.pf.cols) || !s.pf.missing[c] {
			continue
		}
		col := s.pf.cols[c]
		v := col.PadValue()
		if v == nil {
			b.cols[c] = array.MakeArrayOfNull(s.plan.mem, col.Type.ArrowType(), b.rows)
			continue
		}
		ab := array.NewBuilder(s.plan.mem, col.Type.ArrowType())
		ab.Reserve(b.rows)
		for range b.rows {
			if err := metadata.AppendValue(ab, col.Type, v); err != nil {
				panic(err) // a default checked when the column was added; recovered as corrupt
			}
		}
		b.cols[c] = ab.NewArray()
		ab.Release()
	}
}

func (s *fileStream) close() {
	if s == nil {
		return
	}
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	s.pf.Close()
}

// OpenFiles reads files one after the other (in the given order), each
// file's rows in file order. Files and row groups whose statistics rule
// out opts.Filter are skipped; with FilterRows the remaining rows are
// filtered exactly. Undo files are refused: their rows mean something
// only in OpenSorted's merge with the data files they take back.
func (l *Lake) OpenFiles(ctx context.Context, table *metadata.TableInfo, files []metadata.LakeFile, opts ReadOptions) (RecordReader, error) {
	if err := l.checkOpen(); err != nil {
		return nil, err
	}
	for _, f := range files {
		if IsUndoFile(f.Path) {
			return nil, fmt.Errorf("%w: lake: %s is an undo file, read only merged by key with its bucket's data files", metadata.ErrUnsupported, f.Path)
		}
	}
	plan, err := newReadPlan(l, table, opts, nil)
	if err != nil {
		return nil, err
	}
	return &filesReader{l: l, ctx: ctx, plan: plan, files: files}, nil
}

type filesReader struct {
	l     *Lake
	ctx   context.Context
	plan  *readPlan
	files []metadata.LakeFile
	cur   *fileStream
	rec   arrow.RecordBatch
	err   error
	done  bool
}

func (r *filesReader) Next() bool {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	if r.err != nil || r.done {
		return false
	}
	for {
		if r.cur == nil {
			if len(r.files) == 0 {
				r.done = true
				return false
			}
			lf := r.files[0]
			r.files = r.files[1:]
			s, err := r.l.openStream(r.ctx, r.plan, lf)
			if err != nil {
				r.err = err
				return false
			}
			if s == nil {
				continue
			}
			r.cur = s
		}
		b, ok, err := r.cur.nextBatch(r.ctx)
		if err != nil {
			r.err = err
			return false
		}
		if !ok {
			r.cur.close()
			r.cur = nil
			continue
		}
		rec, err := r.plan.build(b)
		b.release()
		if err != nil {
			r.err = err
			return false
		}
		if rec == nil {
			continue
		}
		r.rec = rec
		r.plan.stats.Rows += rec.NumRows()
		return true
	}
}

// build turns a decoded batch into the output record, filtering rows when
// asked; nil when no row is left.
func (p *readPlan) build(b *batch) (arrow.RecordBatch, error) {
	var runs [][2]int
	if p.opts.FilterRows && p.opts.Filter != nil {
		row := &arrowRow{b: b, cols: fileColumns(p.table)}
		start := -1
		for i := 0; i < b.rows; i++ {
			row.i = i
			if predicate.Test(p.opts.Filter, row) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				runs = append(runs, [2]int{start, i})
				start = -1
			}
		}
		if start >= 0 {
			runs = append(runs, [2]int{start, b.rows})
		}
		if len(runs) == 0 {
			return nil, nil
		}
	} else {
		if b.rows == 0 {
			return nil, nil
		}
		runs = [][2]int{{0, b.rows}}
	}
	n := 0
	for _, r := range runs {
		n += r[1] - r[0]
	}
	cols := make([]arrow.Array, len(p.out))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range p.out {
		var err error
		if cols[i], err = takeRuns(p.mem, b.cols[c], runs); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(p.outSchema, cols, int64(n)), nil
}

// takeRuns returns the rows [start, end) of each run of arr, concatenated.
func takeRuns(mem memory.Allocator, arr arrow.Array, runs [][2]int) (arrow.Array, error) {
	if len(runs) == 1 && runs[0][0] == 0 && runs[0][1] == arr.Len() {
		arr.Retain()
		return arr, nil
	}
	if len(runs) == 1 {
		return array.NewSlice(arr, int64(runs[0][0]), int64(runs[0][1])), nil
	}
	parts := make([]arrow.Array, len(runs))
	for i, r := range runs {
		parts[i] = array.NewSlice(arr, int64(r[0]), int64(r[1]))
	}
	return concat(mem, parts)
}

// concat concatenates parts and releases them.
func concat(mem memory.Allocator, parts []arrow.Array) (arrow.Array, error) {
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	out, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, fmt.Errorf("lake: concatenate batches: %w", err)
	}
	return out, nil
}

func (r *filesReader) Record() arrow.RecordBatch { return r.rec }
func (r *filesReader) Err() error                { return r.err }

// Stats returns what the reader has read so far; files not yet opened
// count nothing.
func (r *filesReader) Stats() ReadStats { return r.plan.stats }

func (r *filesReader) Close() error {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	r.cur.close()
	r.cur = nil
	r.done = true
	return nil
}
