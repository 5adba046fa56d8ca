// Package exec holds the operators that run above the scan, over Arrow
// record batches: the post-scan filter, hash aggregation with HAVING,
// projection of expressions, DISTINCT, sort and top-N, offset and limit,
// hash joins (also the nested-loop join) and the set operations. Build
// stacks the single-table ones for one query in SQL's order.
//
// Operators are pull-based. Next returns the next Batch, or io.EOF at the
// end; a Batch is valid until the following Next or Close, which release
// it. Operators are not safe for concurrent use; one query owns its tree
// and closes its root, which closes everything below it. The blocking
// operators (Aggregate, Sort, TopN, a join's build side, the right side
// of INTERSECT and EXCEPT) read their whole input on the first Next,
// checking the context between batches; Sort and TopN Retain the batches
// they keep. Each of them, and Distinct and UNION, tracks the memory it
// holds against Options.MemoryLimit.
//
// Rows are filtered by selection vectors rather than by copying: a Batch is
// a record batch plus the indexes of its visible rows.
package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
)

// Batch is a record batch with an optional selection vector.
type Batch struct {
	Rec arrow.RecordBatch
	// Sel lists the visible rows in ascending order; nil means every row.
	Sel []int32
}

// NumRows is the number of visible rows.
func (b Batch) NumRows() int {
	if b.Sel != nil {
		return len(b.Sel)
	}
	if b.Rec == nil {
		return 0
	}
	return int(b.Rec.NumRows())
}

// Row returns the record row of the i-th visible row.
func (b Batch) Row(i int) int {
	if b.Sel != nil {
		return int(b.Sel[i])
	}
	return i
}

// Operator yields batches. See the package comment for lifetimes.
type Operator interface {
	Next(ctx context.Context) (Batch, error)
	Close() error
}

// Source is what the operators read: record batches of the scan, holding
// the columns of a Layout. Next returns io.EOF at the end; a record is
// valid until the following Next or Close.
type Source interface {
	Next(ctx context.Context) (arrow.RecordBatch, error)
	Close() error
}

// Layout maps a table column index to its position in the scan's records,
// or -1 when the scan does not read it.
type Layout []int

// NewLayout builds the layout of a scan reading the given table columns,
// in that order, of a table with n columns.
func NewLayout(n int, columns []int) Layout {
	l := make(Layout, n)
	for i := range l {
		l[i] = -1
	}
	for pos, c := range columns {
		l[c] = pos
	}
	return l
}

// Scan adapts a Source into an Operator.
func Scan(src Source) Operator { return &scan{src: src} }

type scan struct {
	src    Source
	closed bool
}

func (s *scan) Next(ctx context.Context) (Batch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return Batch{}, err
		}
		rec, err := s.src.Next(ctx)
		if err != nil {
			return Batch{}, err
		}
		if rec.NumRows() == 0 {
			continue
		}
		return Batch{Rec: rec}, nil
	}
}

func (s *scan) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.src.Close()
}

// Limit skips offset visible rows, then passes at most limit rows (limit
// < 0: no limit). Once the limit is reached it stops pulling from its
// input, so no further split is opened.
func Limit(in Operator, offset, limit int64) Operator {
	return &limitOp{in: in, offset: offset, remaining: limit}
}

type limitOp struct {
	in        Operator
	offset    int64
	remaining int64
	sel       []int32
}

func (l *limitOp) Next(ctx context.Context) (Batch, error) {
	for {
		if l.remaining == 0 {
			return Batch{}, io.EOF
		}
		b, err := l.in.Next(ctx)
		if err != nil {
			return Batch{}, err
		}
		n := int64(b.NumRows())
		if l.offset >= n {
			l.offset -= n
			continue
		}
		from := l.offset
		l.offset = 0
		to := n
		if l.remaining >= 0 && to-from > l.remaining {
			to = from + l.remaining
		}
		if l.remaining >= 0 {
			l.remaining -= to - from
		}
		if from == 0 && to == n {
			return b, nil
		}
		l.sel = l.sel[:0]
		for i := from; i < to; i++ {
			l.sel = append(l.sel, int32(b.Row(int(i))))
		}
		return Batch{Rec: b.Rec, Sel: l.sel}, nil
	}
}

func (l *limitOp) Close() error { return l.in.Close() }

// Drain reads op to its end and returns the number of visible rows.
func Drain(ctx context.Context, op Operator) (int64, error) {
	var n int64
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += int64(b.NumRows())
	}
}
