package lakeunion_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/storage"
)

// change is one row of a fake changelog: a change type and a full row of
// canonical values.
type change struct {
	ct  metadata.ChangeType
	row []any
}

// fakeBatch is one record batch of a fake log.
type fakeBatch struct {
	base    int64
	ts      int64 // commit timestamp, ms
	changes []change
	// appendOnly batches carry no change types (+A).
	appendOnly bool
}

// fakeSource is an in-memory Source over one table: per bucket a log of
// batches and KV snapshots of full rows, and lake files of full rows. It builds every batch it hands
// out with mem, and counts open readers so tests prove each is closed.
type fakeSource struct {
	table *metadata.TableInfo
	mem   memory.Allocator
	logs  map[metadata.TableBucket][]fakeBatch
	snaps map[metadata.TableBucket]map[int64][][]any
	// snapBatch is the rows per snapshot batch; 0: 3.
	snapBatch int
	// disorder swaps two snapshot keys, to prove the order is checked.
	disorder bool
	// mu guards open, logReads and lakeReads: a parallel scan opens and
	// closes readers from several goroutines.
	mu   sync.Mutex
	open int
	// logReads records the projection of every log read.
	logReads [][]int
	// lake holds the rows of each lake file by path; lakeBatch is the
	// rows per lake batch (0: 3); lakeReads records every lake read.
	lake      map[string][][]any
	lakeBatch int
	lakeReads []lakeRead
}

var _ lakeunion.Source = (*fakeSource)(nil)

func newFakeSource(table *metadata.TableInfo, mem memory.Allocator) *fakeSource {
	return &fakeSource{
		table: table, mem: mem,
		logs:  map[metadata.TableBucket][]fakeBatch{},
		snaps: map[metadata.TableBucket]map[int64][][]any{},
		lake:  map[string][][]any{},
	}
}

// opened adds d to the count of open readers.
func (f *fakeSource) opened(d int) {
	f.mu.Lock()
	f.open += d
	f.mu.Unlock()
}

// openReaders returns the count of open readers.
func (f *fakeSource) openReaders() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

// appendLog adds a batch at the end of a bucket's log and returns its
// base offset.
func (f *fakeSource) appendLog(tb metadata.TableBucket, ts int64, appendOnly bool, changes []change) int64 {
	var base int64
	if bs := f.logs[tb]; len(bs) > 0 {
		last := bs[len(bs)-1]
		base = last.base + int64(len(last.changes))
	}
	f.logs[tb] = append(f.logs[tb], fakeBatch{base: base, ts: ts, changes: changes, appendOnly: appendOnly})
	return base
}

func (f *fakeSource) logEnd(tb metadata.TableBucket) int64 {
	bs := f.logs[tb]
	if len(bs) == 0 {
		return 0
	}
	return bs[len(bs)-1].base + int64(len(bs[len(bs)-1].changes))
}

func (f *fakeSource) columns(proj []int) []metadata.Column {
	if proj == nil {
		return f.table.Schema.Columns
	}
	cols := make([]metadata.Column, len(proj))
	for i, c := range proj {
		cols[i] = f.table.Schema.Columns[c]
	}
	return cols
}

// record builds a batch of the projected columns of rows.
func (f *fakeSource) record(proj []int, rows [][]any) (arrow.RecordBatch, error) {
	cols := f.columns(proj)
	schema := metadata.ArrowSchema(cols)
	if len(cols) == 0 {
		return array.NewRecordBatch(schema, nil, int64(len(rows))), nil
	}
	b := array.NewRecordBuilder(f.mem, schema)
	defer b.Release()
	for _, row := range rows {
		for i, c := range cols {
			src := i
			if proj != nil {
				src = proj[i]
			}
			if err := metadata.AppendValue(b.Field(i), c.Type, row[src]); err != nil {
				return nil, err
			}
		}
	}
	return b.NewRecordBatch(), nil
}

func (f *fakeSource) ReadLog(_ context.Context, tb metadata.TableBucket, start, stop int64, opts storage.ReadOptions) (lakeunion.LogBatchReader, error) {
	if end := f.logEnd(tb); stop > end {
		return nil, fmt.Errorf("%w: stop %d past the log end %d", metadata.ErrNotFound, stop, end)
	}
	f.mu.Lock()
	f.logReads = append(f.logReads, slices.Clone(opts.Projection))
	f.open++
	f.mu.Unlock()
	return &fakeLogReader{f: f, batches: f.logs[tb], start: start, stop: stop, proj: opts.Projection}, nil
}

type fakeLogReader struct {
	f           *fakeSource
	batches     []fakeBatch
	start, stop int64
	proj        []int
	i           int
	cur         storage.LogBatch
	err         error
	closed      bool
}

func (r *fakeLogReader) Next() bool {
	r.release()
	for r.err == nil && !r.closed && r.i < len(r.batches) {
		b := r.batches[r.i]
		r.i++
		from := max(r.start, b.base)
		to := min(r.stop, b.base+int64(len(b.changes)))
		if from >= to {
			continue
		}
		var rows [][]any
		var cts []metadata.ChangeType
		for _, c := range b.changes[from-b.base : to-b.base] {
			rows = append(rows, c.row)
			cts = append(cts, c.ct)
		}
		rec, err := r.f.record(r.proj, rows)
		if err != nil {
			r.err = err
			return false
		}
		if b.appendOnly {
			cts = nil
		}
		r.cur = storage.LogBatch{Record: rec, BaseOffset: from, ChangeTypes: cts, CommitTimestamp: b.ts}
		return true
	}
	return false
}

func (r *fakeLogReader) release() {
	if r.cur.Record != nil {
		r.cur.Record.Release()
	}
	r.cur = storage.LogBatch{}
}

func (r *fakeLogReader) Batch() storage.LogBatch { return r.cur }
func (r *fakeLogReader) Err() error              { return r.err }

func (r *fakeLogReader) Close() error {
	if !r.closed {
		r.closed = true
		r.release()
		r.f.opened(-1)
	}
	return nil
}

// key is the ordered key of a full row's physical primary key.
func (f *fakeSource) key(row []any) ([]byte, error) {
	idx := f.table.PhysicalKeyIndexes()
	types := make([]metadata.DataType, len(idx))
	vals := make([]any, len(idx))
	for i, c := range idx {
		types[i], vals[i] = f.table.Schema.Columns[c].Type, row[c]
	}
	return metadata.EncodeOrderedKey(types, vals)
}

func (f *fakeSource) ReadKvSnapshot(_ context.Context, tb metadata.TableBucket, id int64, opts storage.ReadOptions) (lakeunion.KvBatchReader, error) {
	rows, ok := f.snaps[tb][id]
	if !ok {
		return nil, fmt.Errorf("%w: kv snapshot %d of %s", metadata.ErrNotFound, id, tb)
	}
	type kr struct {
		key []byte
		row []any
	}
	var sorted []kr
	for _, row := range rows {
		k, err := f.key(row)
		if err != nil {
			return nil, err
		}
		sorted = append(sorted, kr{k, row})
	}
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i].key, sorted[j].key) < 0 })
	if f.disorder && len(sorted) > 1 {
		sorted[0], sorted[1] = sorted[1], sorted[0]
	}
	per := f.snapBatch
	if per <= 0 {
		per = 3
	}
	r := &fakeKvReader{f: f, proj: opts.Projection}
	for i := 0; i < len(sorted); i += per {
		var keys [][]byte
		var rs [][]any
		for _, x := range sorted[i:min(i+per, len(sorted))] {
			keys, rs = append(keys, x.key), append(rs, x.row)
		}
		r.keys, r.rows = append(r.keys, keys), append(r.rows, rs)
	}
	f.opened(1)
	return r, nil
}

type fakeKvReader struct {
	f      *fakeSource
	proj   []int
	keys   [][][]byte
	rows   [][][]any
	i      int
	cur    storage.KvBatch
	err    error
	closed bool
}

func (r *fakeKvReader) Next() bool {
	if r.cur.Record != nil {
		r.cur.Record.Release()
		r.cur = storage.KvBatch{}
	}
	if r.closed || r.err != nil || r.i >= len(r.rows) {
		return false
	}
	rec, err := r.f.record(r.proj, r.rows[r.i])
	if err != nil {
		r.err = err
		return false
	}
	r.cur = storage.KvBatch{Record: rec, Keys: r.keys[r.i]}
	r.i++
	return true
}

func (r *fakeKvReader) Batch() storage.KvBatch { return r.cur }
func (r *fakeKvReader) Err() error             { return r.err }

func (r *fakeKvReader) Close() error {
	if !r.closed {
		r.closed = true
		if r.cur.Record != nil {
			r.cur.Record.Release()
			r.cur = storage.KvBatch{}
		}
		r.f.opened(-1)
	}
	return nil
}

// anyRow is a predicate.Row over a full row of canonical values.
type anyRow []any

func (r anyRow) Value(c int) any {
	if c < 0 || c >= len(r) {
		return nil
	}
	return r[c]
}

// lakeRead records one lake read a fake source opened.
type lakeRead struct {
	sorted     bool
	files      int
	proj       []int
	filterRows bool
	filter     string
}

// filterLakeRows keeps the rows opts' filter keeps, when it asks for row
// filtering, as the lake does.
func filterLakeRows(rows [][]any, opts lakeunion.LakeReadOptions) [][]any {
	if !opts.FilterRows || opts.Filter == nil {
		return rows
	}
	var out [][]any
	for _, r := range rows {
		if predicate.Test(opts.Filter, anyRow(r)) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeSource) recordLakeRead(sorted bool, files []metadata.LakeFile, opts lakeunion.LakeReadOptions) {
	lr := lakeRead{sorted: sorted, files: len(files), proj: slices.Clone(opts.Projection), filterRows: opts.FilterRows}
	if opts.Filter != nil {
		lr.filter = opts.Filter.String()
	}
	f.mu.Lock()
	f.lakeReads = append(f.lakeReads, lr)
	f.mu.Unlock()
}

// ReadLake reads the files one after another, a batch per lakeBatch rows
// (default 3) of each file, projected.
func (f *fakeSource) ReadLake(_ context.Context, table *metadata.TableInfo, files []metadata.LakeFile, opts lakeunion.LakeReadOptions) (lakeunion.LakeRecordReader, error) {
	if table != f.table {
		return nil, fmt.Errorf("lake read of table %s, want %s", table.Path, f.table.Path)
	}
	f.recordLakeRead(false, files, opts)
	per := f.lakeBatch
	if per <= 0 {
		per = 3
	}
	r := &fakeLakeReader{f: f, proj: opts.Projection}
	for _, file := range files {
		rows, ok := f.lake[file.Path]
		if !ok {
			return nil, fmt.Errorf("%w: lake file %s", metadata.ErrNotFound, file.Path)
		}
		rows = filterLakeRows(rows, opts)
		for i := 0; i < len(rows); i += per {
			r.batches = append(r.batches, rows[i:min(i+per, len(rows))])
		}
	}
	f.opened(1)
	return r, nil
}

// ReadLakeSorted returns the rows of the files merged by key, as the
// lake's k-way merge does: one row per key, a later file's (in the order
// given) winning over an earlier one's; batches of lakeBatch rows.
func (f *fakeSource) ReadLakeSorted(_ context.Context, table *metadata.TableInfo, files []metadata.LakeFile, opts lakeunion.LakeReadOptions) (lakeunion.KvBatchReader, error) {
	if table != f.table {
		return nil, fmt.Errorf("lake read of table %s, want %s", table.Path, f.table.Path)
	}
	f.recordLakeRead(true, files, opts)
	byKey := map[string][]any{}
	for _, file := range files {
		rows, ok := f.lake[file.Path]
		if !ok {
			return nil, fmt.Errorf("%w: lake file %s", metadata.ErrNotFound, file.Path)
		}
		for _, row := range rows {
			k, err := f.key(row)
			if err != nil {
				return nil, err
			}
			byKey[string(k)] = row
		}
	}
	keys := slices.Sorted(maps.Keys(byKey))
	if f.disorder && len(keys) > 1 {
		keys[0], keys[1] = keys[1], keys[0]
	}
	per := f.lakeBatch
	if per <= 0 {
		per = 3
	}
	r := &fakeKvReader{f: f, proj: opts.Projection}
	var bk [][]byte
	var br [][]any
	flush := func() {
		if len(br) > 0 {
			r.keys, r.rows = append(r.keys, bk), append(r.rows, br)
			bk, br = nil, nil
		}
	}
	for _, k := range keys {
		row := byKey[k]
		if opts.FilterRows && opts.Filter != nil && !predicate.Test(opts.Filter, anyRow(row)) {
			continue
		}
		bk, br = append(bk, []byte(k)), append(br, row)
		if len(br) == per {
			flush()
		}
	}
	flush()
	f.opened(1)
	return r, nil
}

type fakeLakeReader struct {
	f       *fakeSource
	proj    []int
	batches [][][]any
	i       int
	cur     arrow.RecordBatch
	err     error
	closed  bool
}

func (r *fakeLakeReader) Next() bool {
	r.release()
	if r.closed || r.err != nil || r.i >= len(r.batches) {
		return false
	}
	r.cur, r.err = r.f.record(r.proj, r.batches[r.i])
	r.i++
	return r.err == nil
}

func (r *fakeLakeReader) release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *fakeLakeReader) Record() arrow.RecordBatch { return r.cur }
func (r *fakeLakeReader) Err() error                { return r.err }

func (r *fakeLakeReader) Close() error {
	if !r.closed {
		r.closed = true
		r.release()
		r.f.opened(-1)
	}
	return nil
}
