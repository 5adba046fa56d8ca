package lake

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// OpenSorted reads the files of one bucket of a primary-key table as one
// stream in ascending order of the encoded physical key: a k-way merge of
// the files, each sorted by that key. When several files hold the same
// key, one row wins and the others are dropped, so every key appears
// once: an undo file's row beats a data file's, the undo file of the
// older snapshot beats a newer one's (it takes the key further back, see
// Lake.SnapshotFiles), and among data files the row of the file written
// for the newer snapshot (the <snapshot id> of its name; then the larger
// <n>; then the later position in files) wins. A winning undo row that
// marks its key absent (__offset UndoAbsent) is dropped too, and a
// column it leaves unchanged (UndoSameColumn) takes its value from the
// key's next version in that order that sets it.
//
// Statistics prune row groups only when the files' key ranges are
// disjoint: skipping part of a newer file would otherwise resurrect an
// older version of its keys. With FilterRows the surviving row of each
// key is filtered exactly, after the merge.
func (l *Lake) OpenSorted(ctx context.Context, table *metadata.TableInfo, files []metadata.LakeFile, opts ReadOptions) (sr SortedReader, err error) {
	if err := l.checkOpen(); err != nil {
		return nil, err
	}
	if !table.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: lake: sorted read of %s, which has no primary key", metadata.ErrUnsupported, table.Path)
	}
	keyCols := table.PhysicalKeyIndexes()
	extra := keyCols
	undo := slices.ContainsFunc(files, func(f metadata.LakeFile) bool { return IsUndoFile(f.Path) })
	if undo {
		n := len(table.Schema.Columns)
		extra = append(slices.Clone(keyCols), n+offsetSystemColumn, n+numSystemColumns)
	}
	plan, err := newReadPlan(l, table, opts, extra)
	if err != nil {
		return nil, err
	}
	r := &sortedReader{l: l, ctx: ctx, plan: plan, keyCols: keyCols, cols: fileColumns(table)}
	for _, c := range keyCols {
		r.keyTypes = append(r.keyTypes, table.Schema.Columns[c].Type)
	}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	pfs := make([]*parquetFile, 0, len(files))
	defer func() {
		for _, pf := range pfs {
			pf.Close() // those not handed to a stream
		}
	}()
	for _, lf := range files {
		pf, err := l.openParquet(table, lf)
		if err != nil {
			return nil, err
		}
		pfs = append(pfs, pf)
	}
	prune := disjointKeys(pfs)
	for i, pf := range pfs {
		pfs[i] = nil
		s, err := l.streamOf(ctx, plan, pf, prune)
		if err != nil {
			return nil, err
		}
		if s == nil {
			continue
		}
		c := &cursor{s: s, order: i}
		c.snap, c.seq, c.undo, _ = parseFileName(files[i].Path)
		ok, err := r.load(c)
		if err != nil {
			c.close()
			return nil, err
		}
		if ok {
			r.h = append(r.h, c)
		} else {
			c.close()
		}
	}
	heap.Init(&r.h)
	return r, nil
}

// disjointKeys reports whether the files' key ranges are known and do not
// overlap.
func disjointKeys(pfs []*parquetFile) bool {
	if len(pfs) <= 1 {
		return true
	}
	sorted := slices.Clone(pfs)
	for _, pf := range sorted {
		if pf.minKey == nil || pf.maxKey == nil {
			return false
		}
	}
	slices.SortFunc(sorted, func(a, b *parquetFile) int { return bytes.Compare(a.minKey, b.minKey) })
	for i := 1; i < len(sorted); i++ {
		if bytes.Compare(sorted[i-1].maxKey, sorted[i].minKey) >= 0 {
			return false
		}
	}
	return true
}

// cursor is one file's position in the merge.
type cursor struct {
	s          *fileStream
	snap       int64
	seq, order int
	undo       bool
	b          *batch
	row        int
	key        []byte
	prev       []byte
}

func (c *cursor) close() {
	if c.b != nil {
		c.b.release()
		c.b = nil
	}
	c.s.close()
}

// newer orders files for equal keys, the winner first: undo files before
// data files, the undo file of the older snapshot first, the data file of
// the newer snapshot first; then the later file of a snapshot, then the
// later position.
func (c *cursor) newer(o *cursor) bool {
	if c.undo != o.undo {
		return c.undo
	}
	snap := cmp.Compare(c.snap, o.snap)
	if c.undo {
		snap = -snap
	}
	return cmp.Or(snap, cmp.Compare(c.seq, o.seq), cmp.Compare(c.order, o.order)) > 0
}

// absent reports whether c's current row is an undo row marking its key
// absent.
func (r *sortedReader) absent(c *cursor) (bool, error) {
	if !c.undo {
		return false, nil
	}
	off, ok := c.b.cols[r.plan.sysBase+offsetSystemColumn].(*array.Int64)
	if !ok {
		return false, corrupt(c.s.pf.rel, "undo file without "+metadata.LakeOffsetColumn)
	}
	return off.Value(c.row) == UndoAbsent, nil
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].newer(h[j])
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

type sortedReader struct {
	l        *Lake
	ctx      context.Context
	plan     *readPlan
	cols     []metadata.Column
	keyCols  []int
	keyTypes []metadata.DataType
	h        cursorHeap

	// runs are, per output column, the stretch of consecutive rows of one
	// batch being emitted.
	runs []colRun
	// vs are the versions of the key being merged, the winner first; src
	// the version each output column is taken from.
	vs  []*cursor
	src []*cursor
	// pending are the slices of the batch being built, per output column.
	pending [][]arrow.Array
	keys    [][]byte
	n       int

	rec     arrow.RecordBatch
	outKeys [][]byte
	err     error
	done    bool
}

// colRun is a stretch [start, end) of rows of batch b.
type colRun struct {
	b          *batch
	start, end int
}

// load moves c to its next non-empty batch and computes its key; false at
// the end of the file.
func (r *sortedReader) load(c *cursor) (bool, error) {
	for {
		if c.b != nil {
			r.closeRunsOf(c.b)
			c.b.release()
			c.b = nil
		}
		b, ok, err := c.s.nextBatch(r.ctx)
		if err != nil || !ok {
			return false, err
		}
		if b.rows == 0 {
			b.release()
			continue
		}
		c.b, c.row = b, 0
		return true, r.setKey(c)
	}
}

// setKey encodes the physical key of c's current row and checks that the
// file is in strictly ascending key order.
func (r *sortedReader) setKey(c *cursor) error {
	vals := make([]any, len(r.keyCols))
	for i, col := range r.keyCols {
		vals[i] = metadata.ValueAt(c.b.cols[col], r.keyTypes[i], c.row)
	}
	key, err := metadata.EncodeOrderedKey(r.keyTypes, vals)
	if err != nil {
		return corrupt(c.s.pf.rel, fmt.Errorf("key of a row: %w", err))
	}
	if c.prev != nil && bytes.Compare(key, c.prev) <= 0 {
		return corrupt(c.s.pf.rel, "rows are not in ascending key order")
	}
	c.key, c.prev = key, key
	return nil
}

// advance moves c past its current row; false when c is exhausted.
func (r *sortedReader) advance(c *cursor) (bool, error) {
	if c.row+1 < c.b.rows {
		c.row++
		return true, r.setKey(c)
	}
	return r.load(c)
}

// closeRun turns output column i's run into a slice of it.
func (r *sortedReader) closeRun(i int) {
	run := &r.runs[i]
	if run.b == nil {
		return
	}
	r.pending[i] = append(r.pending[i], array.NewSlice(run.b.cols[r.plan.out[i]], int64(run.start), int64(run.end)))
	*run = colRun{}
}

// closeRunsOf closes the runs taken from batch b, before it is released.
func (r *sortedReader) closeRunsOf(b *batch) {
	for i := range r.runs {
		if r.runs[i].b == b {
			r.closeRun(i)
		}
	}
}

func (r *sortedReader) closeRuns() {
	for i := range r.runs {
		r.closeRun(i)
	}
}

// emit adds a row to the output: output column i from the current row of
// src[i].
func (r *sortedReader) emit(key []byte, src []*cursor) {
	if r.runs == nil {
		r.runs = make([]colRun, len(r.plan.out))
		r.pending = make([][]arrow.Array, len(r.plan.out))
	}
	for i, c := range src {
		run := &r.runs[i]
		if run.b == c.b && run.end == c.row {
			run.end++
			continue
		}
		r.closeRun(i)
		run.b, run.start, run.end = c.b, c.row, c.row+1
	}
	r.keys = append(r.keys, key)
	r.n++
}

// same reports whether version c leaves table column col to the key's
// next version: an undo row marking it in UndoSameColumn.
func (r *sortedReader) same(c *cursor, col int) (bool, error) {
	if !c.undo {
		return false, nil
	}
	bits, ok := c.b.cols[r.plan.sysBase+numSystemColumns].(*array.Binary)
	if !ok {
		return false, corrupt(c.s.pf.rel, "undo file without "+UndoSameColumn)
	}
	return UndoSame(bits.Value(c.row), col), nil
}

// sourceOf returns the version of the key in r.vs that holds table
// column col (system columns are the winner's).
func (r *sortedReader) sourceOf(col int) (*cursor, error) {
	if col >= r.plan.sysBase {
		return r.vs[0], nil
	}
	for _, v := range r.vs {
		same, err := r.same(v, col)
		if err != nil {
			return nil, err
		}
		if !same {
			return v, nil
		}
	}
	w := r.vs[0]
	return nil, corrupt(w.s.pf.rel, fmt.Sprintf("an undo row leaves column %s of its key unchanged, and no newer version holds it", r.cols[col].Name))
}

func (r *sortedReader) Next() bool {
	if r.rec != nil {
		r.rec.Release()
		r.rec, r.outKeys = nil, nil
	}
	if r.err != nil || r.done {
		return false
	}
	if err := r.fill(); err != nil {
		r.err = err
		r.dropPending()
		return false
	}
	if r.n == 0 {
		r.done = true
		return false
	}
	rec, err := r.flush()
	if err != nil {
		r.err = err
		return false
	}
	r.rec = rec
	r.plan.stats.Rows += rec.NumRows()
	return true
}

// Stats returns what the reader has read: the row groups of every file
// (all are opened up front) and the rows returned so far.
func (r *sortedReader) Stats() ReadStats { return r.plan.stats }

// fill merges rows until a batch is full or the files are exhausted.
func (r *sortedReader) fill() error {
	var row *composedRow
	if r.plan.opts.FilterRows && r.plan.opts.Filter != nil {
		row = &composedRow{r: r}
	}
	for r.n < readBatchRows && len(r.h) > 0 {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		// The versions of the key, the winner first; the others lose, but
		// for the columns an undo row leaves to them.
		win := heap.Pop(&r.h).(*cursor)
		r.vs = append(r.vs[:0], win)
		for len(r.h) > 0 && bytes.Equal(r.h[0].key, win.key) {
			r.vs = append(r.vs, heap.Pop(&r.h).(*cursor))
		}
		gone, err := r.absent(win)
		if err != nil {
			return err
		}
		keep := !gone
		if keep {
			if r.src == nil {
				r.src = make([]*cursor, len(r.plan.out))
			}
			for i, col := range r.plan.out {
				if !win.undo {
					r.src[i] = win // a data row holds every column
				} else if r.src[i], err = r.sourceOf(col); err != nil {
					return err
				}
			}
		}
		if keep && row != nil {
			keep, err = row.test()
			if err != nil {
				return err
			}
		}
		if keep {
			r.emit(win.key, r.src)
		}
		for i, v := range r.vs {
			ok, err := r.advance(v)
			if err != nil {
				return err // Close closes the versions still in r.vs
			}
			r.vs[i] = nil
			if ok {
				heap.Push(&r.h, v)
			} else {
				v.close()
			}
		}
	}
	return nil
}

// composedRow is a predicate.Row over the merged row of the key being
// merged, each column from the version sourceOf names.
type composedRow struct {
	r   *sortedReader
	err error
}

func (c *composedRow) Value(col int) any {
	if col < 0 || col >= c.r.plan.sysBase {
		return nil
	}
	v, err := c.r.sourceOf(col)
	if err != nil {
		c.err = err
		return nil
	}
	if v.b.cols[col] == nil {
		return nil
	}
	return metadata.ValueAt(v.b.cols[col], c.r.cols[col].Type, v.row)
}

// test evaluates the read's filter on the row.
func (c *composedRow) test() (bool, error) {
	c.err = nil
	ok := predicate.Test(c.r.plan.opts.Filter, c)
	return ok, c.err
}

// flush builds the output batch from the pending slices.
func (r *sortedReader) flush() (arrow.RecordBatch, error) {
	r.closeRuns()
	cols := make([]arrow.Array, len(r.plan.out))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var err error
	for i := range r.plan.out {
		parts := r.pending[i]
		r.pending[i] = nil
		if err == nil {
			cols[i], err = concat(r.plan.mem, parts)
		} else {
			for _, p := range parts {
				p.Release()
			}
		}
	}
	n := r.n
	r.outKeys, r.keys, r.n = r.keys, nil, 0
	if err != nil {
		return nil, err
	}
	return array.NewRecordBatch(r.plan.outSchema, cols, int64(n)), nil
}

func (r *sortedReader) dropPending() {
	clear(r.runs)
	for i := range r.pending {
		for _, p := range r.pending[i] {
			p.Release()
		}
		r.pending[i] = nil
	}
	r.keys, r.n = nil, 0
}

func (r *sortedReader) Batch() (arrow.RecordBatch, [][]byte) { return r.rec, r.outKeys }
func (r *sortedReader) Err() error                           { return r.err }

func (r *sortedReader) Close() error {
	if r.rec != nil {
		r.rec.Release()
		r.rec, r.outKeys = nil, nil
	}
	r.dropPending()
	for _, c := range r.h {
		c.close()
	}
	for _, c := range r.vs {
		if c != nil {
			c.close() // popped for a merge that failed
		}
	}
	r.h, r.vs = nil, nil
	r.done = true
	return nil
}
