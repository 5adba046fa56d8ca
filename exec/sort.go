package exec

import (
	"container/heap"
	"context"
	"errors"
	"io"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
)

// SortKey is one ORDER BY key: a column of the input records. NULLs come
// first ascending and last descending (DESIGN §6).
type SortKey struct {
	Col  int
	Desc bool
}

// sorter holds retained input batches and compares their rows by the
// keys. Ties keep input order (the sorts are stable), so a query's
// result is deterministic for a given input order.
type sorter struct {
	keys    []SortKey
	types   []metadata.DataType // of every input column
	cmps    []colCmp
	batches []arrow.RecordBatch
	budget  memBudget
	rows    int64
}

func newSorter(keys []SortKey, types []metadata.DataType, limit int64) *sorter {
	return &sorter{keys: keys, types: types, budget: memBudget{limit: limit}}
}

// retain keeps rec (retaining it) and returns its batch number.
func (s *sorter) retain(rec arrow.RecordBatch) int32 {
	rec.Retain()
	if s.cmps == nil {
		for _, k := range s.keys {
			s.cmps = append(s.cmps, newColCmp(s.types[k.Col], rec.Column(k.Col)))
		}
	}
	for i, k := range s.keys {
		s.cmps[i].add(rec.Column(k.Col))
	}
	s.batches = append(s.batches, rec)
	s.budget.grow(recordBytes(rec))
	return int32(len(s.batches) - 1)
}

func (s *sorter) cmp(a, b rowRef) int {
	for i, k := range s.keys {
		c := s.cmps[i].cmp(int(a.b), int(a.r), int(b.b), int(b.r))
		if c != 0 {
			if k.Desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// cmpInOrder breaks ties of cmp by input order (batch, then row), which
// makes a heap agree with a stable sort.
func (s *sorter) cmpInOrder(a, b rowRef) int {
	if c := s.cmp(a, b); c != 0 {
		return c
	}
	if a.b != b.b {
		return int(a.b - b.b)
	}
	return int(a.r - b.r)
}

func (s *sorter) releaseBatches() {
	for _, b := range s.batches {
		b.Release()
	}
	s.batches = s.batches[:0]
	for _, c := range s.cmps {
		c.reset()
	}
	s.budget.used = 0
}

// Sort orders its input by keys, reading all of it first. types are the
// metadata types of the input columns.
func Sort(in Operator, keys []SortKey, types []metadata.DataType, opts Options) Operator {
	opts = opts.withDefaults()
	return &sortOp{in: in, s: newSorter(keys, types, opts.MemoryLimit), mem: opts.Allocator}
}

type sortOp struct {
	in       Operator
	s        *sorter
	mem      memory.Allocator
	refs     []rowRef
	consumed bool
	emitted  int
	out      arrow.RecordBatch
}

func (o *sortOp) Next(ctx context.Context) (Batch, error) {
	if !o.consumed {
		for {
			if err := ctx.Err(); err != nil {
				return Batch{}, err
			}
			b, err := o.in.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return Batch{}, err
			}
			id := o.s.retain(b.Rec)
			for i := 0; i < b.NumRows(); i++ {
				o.refs = append(o.refs, rowRef{b: id, r: int32(b.Row(i))})
			}
			o.s.budget.grow(int64(b.NumRows()) * 8)
			if err := o.s.budget.check("ORDER BY", func() string { return count(int64(len(o.refs)), "row") }); err != nil {
				return Batch{}, err
			}
		}
		o.consumed = true
		// Refs are in input order, so breaking ties by it is a stable sort.
		slices.SortFunc(o.refs, o.s.cmpInOrder)
	}
	o.release()
	if o.emitted >= len(o.refs) || len(o.s.batches) == 0 {
		return Batch{}, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return Batch{}, err
	}
	to := min(len(o.refs), o.emitted+outBatchRows)
	rec, err := copyRows(o.mem, o.s.batches[0].Schema(), o.s.types, o.s.batches, o.refs[o.emitted:to])
	if err != nil {
		return Batch{}, err
	}
	o.emitted = to
	o.out = rec
	return Batch{Rec: rec}, nil
}

func (o *sortOp) release() {
	if o.out != nil {
		o.out.Release()
		o.out = nil
	}
}

func (o *sortOp) Close() error {
	o.release()
	o.s.releaseBatches()
	o.refs = nil
	return o.in.Close()
}

// TopN yields the first n rows of its input in key order, without sorting
// it all: a bounded heap holds the best n rows seen so far, and the
// batches they live in are compacted into one when too many are held.
// With n = 0 it yields nothing and reads nothing.
func TopN(in Operator, keys []SortKey, types []metadata.DataType, n int64, opts Options) Operator {
	opts = opts.withDefaults()
	return &topNOp{in: in, s: newSorter(keys, types, opts.MemoryLimit), n: int(n), mem: opts.Allocator}
}

// compactRows is the least number of held rows at which top-N compacts.
const compactRows = 8192

type topNOp struct {
	in       Operator
	s        *sorter
	mem      memory.Allocator
	n        int
	h        refHeap
	held     int64 // rows of the retained batches
	consumed bool
	out      arrow.RecordBatch
	done     bool
}

// refHeap is a max-heap by the sort order: its top is the worst row kept.
type refHeap struct {
	refs []rowRef
	s    *sorter
}

func (h *refHeap) Len() int           { return len(h.refs) }
func (h *refHeap) Less(i, j int) bool { return h.s.cmpInOrder(h.refs[i], h.refs[j]) > 0 }
func (h *refHeap) Swap(i, j int)      { h.refs[i], h.refs[j] = h.refs[j], h.refs[i] }
func (h *refHeap) Push(x any)         { h.refs = append(h.refs, x.(rowRef)) }
func (h *refHeap) Pop() any {
	x := h.refs[len(h.refs)-1]
	h.refs = h.refs[:len(h.refs)-1]
	return x
}

func (o *topNOp) Next(ctx context.Context) (Batch, error) {
	if o.done || o.n <= 0 {
		return Batch{}, io.EOF
	}
	if !o.consumed {
		if err := o.consume(ctx); err != nil {
			return Batch{}, err
		}
		o.consumed = true
	}
	o.done = true
	if len(o.h.refs) == 0 {
		return Batch{}, io.EOF
	}
	refs := slices.Clone(o.h.refs)
	slices.SortFunc(refs, o.s.cmpInOrder)
	rec, err := copyRows(o.mem, o.s.batches[0].Schema(), o.s.types, o.s.batches, refs)
	if err != nil {
		return Batch{}, err
	}
	o.out = rec
	return Batch{Rec: rec}, nil
}

func (o *topNOp) consume(ctx context.Context) error {
	o.h.s = o.s
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := o.in.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		id := int32(len(o.s.batches))
		// Compare against rows of this batch before deciding to keep it.
		o.s.retain(b.Rec)
		kept := false
		first := o.s.keys[0]
		val := numericKey(b.Rec.Column(first.Col))
		var topVal float64
		topKnown, topUsable := false, false
		for i := 0; i < b.NumRows(); i++ {
			ref := rowRef{b: id, r: int32(b.Row(i))}
			if len(o.h.refs) < o.n {
				heap.Push(&o.h, ref)
				kept, topKnown = true, false
				continue
			}
			// Most rows lose to the worst kept row on the first key
			// alone; a typed test of that skips the full comparison.
			if val != nil {
				if !topKnown {
					top := o.h.refs[0]
					topVal, topUsable = numericKey(o.s.batches[top.b].Column(first.Col))(int(top.r))
					topKnown = true
				}
				if v, ok := val(int(ref.r)); ok && topUsable && (first.Desc && v < topVal || !first.Desc && v > topVal) {
					continue
				}
			}
			// Ties keep the earlier row, as a stable sort would.
			if o.s.cmp(ref, o.h.refs[0]) < 0 {
				o.h.refs[0] = ref
				heap.Fix(&o.h, 0)
				kept, topKnown = true, false
			}
		}
		if !kept {
			o.dropLast()
			continue
		}
		o.held += b.Rec.NumRows()
		if o.held > int64(max(4*o.n, compactRows)) {
			if err := o.compact(); err != nil {
				return err
			}
		}
		if err := o.s.budget.check("ORDER BY ... LIMIT", func() string { return count(int64(o.n), "kept row") }); err != nil {
			return err
		}
	}
}

// dropLast forgets the batch just retained, which holds no kept row.
func (o *topNOp) dropLast() {
	last := len(o.s.batches) - 1
	rec := o.s.batches[last]
	o.s.budget.grow(-recordBytes(rec))
	rec.Release()
	o.s.batches = o.s.batches[:last]
	for _, c := range o.s.cmps {
		c.truncate(last)
	}
}

// compact copies the kept rows into one batch and releases the others.
// Rows keep their relative order, so ties still resolve to the earlier
// input row.
func (o *topNOp) compact() error {
	refs := slices.Clone(o.h.refs)
	slices.SortFunc(refs, func(a, b rowRef) int {
		if a.b != b.b {
			return int(a.b - b.b)
		}
		return int(a.r - b.r)
	})
	rec, err := copyRows(o.mem, o.s.batches[0].Schema(), o.s.types, o.s.batches, refs)
	if err != nil {
		return err
	}
	o.s.releaseBatches()
	o.s.retain(rec)
	rec.Release() // retain took its own reference
	o.h.refs = o.h.refs[:0]
	for i := range refs {
		o.h.refs = append(o.h.refs, rowRef{b: 0, r: int32(i)})
	}
	heap.Init(&o.h)
	o.held = int64(len(refs))
	return nil
}

func (o *topNOp) Close() error {
	if o.out != nil {
		o.out.Release()
		o.out = nil
	}
	o.s.releaseBatches()
	return o.in.Close()
}

// numericKey reads a DOUBLE or integer sort key as float64 for top-N's
// pre-test, or is nil for other arrays. It reports false for NULL and NaN,
// whose order the full comparison decides. Widening integers to float64
// rounds monotonically, so a strict inequality of the widened values
// holds of the integers too.
func numericKey(arr arrow.Array) func(i int) (float64, bool) {
	switch a := arr.(type) {
	case *array.Float64:
		return func(i int) (float64, bool) {
			v := a.Value(i)
			return v, !a.IsNull(i) && !math.IsNaN(v)
		}
	case *array.Int64, *array.Int32, *array.Int16, *array.Int8:
		get := intGetter(arr)
		return func(i int) (float64, bool) { return float64(get(i)), !arr.IsNull(i) }
	}
	return nil
}
