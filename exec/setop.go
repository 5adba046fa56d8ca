package exec

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// SetOp combines the rows of left and right, which both have len(types)
// columns of exactly those types. Rows compare as SQL's set operations
// compare them: column by column, NULL equal to NULL.
//
//   - UNION ALL yields left's rows, then right's, streaming both.
//   - UNION yields the first of each distinct row of left, then right.
//   - INTERSECT and EXCEPT read right whole first, then stream left:
//     INTERSECT yields each distinct left row that right holds, EXCEPT
//     each that it does not; with ALL, a row left holds m times and right
//     n times is yielded min(m, n) times by INTERSECT ALL and max(m-n, 0)
//     times by EXCEPT ALL (SQL's rule), in left's order.
//
// The rows it remembers count against opts.MemoryLimit. Batches are
// passed on with a selection, not copied. Not safe for concurrent use;
// Close closes both inputs.
func SetOp(left, right Operator, kind sqlplan.SetOpKind, all bool, types []metadata.DataType, opts Options) Operator {
	opts = opts.withDefaults()
	s := &setOp{left: left, right: right, kind: kind, all: all, types: outputTypes(types),
		budget: memBudget{limit: opts.MemoryLimit}, nullID: -1}
	if len(types) == 1 && isIntArrow(s.types[0].ArrowType()) {
		s.ints = newIntMap()
	} else {
		s.keys = map[string]int32{}
	}
	return s
}

type setOp struct {
	left, right Operator
	kind        sqlplan.SetOpKind
	all         bool
	types       []metadata.DataType
	budget      memBudget

	// The rows seen, by id: one integer column in ints (NULL as nullID),
	// anything else by appendKey's encoding in keys.
	ints   *intMap
	nullID int32
	keys   map[string]int32
	nids   int
	// count is how often right holds each row, still to be matched;
	// emitted marks the rows a distinct operation has yielded.
	count   []int64
	emitted []bool

	rightRead bool
	leftDone  bool
	rightDone bool
	buf       []byte
	getInt    func(int) int64 // reads the current record's integer column
	every     []int32
	sel       []int32
	closed    bool
}

func (s *setOp) Next(ctx context.Context) (Batch, error) {
	switch s.kind {
	case sqlplan.SetUnion, sqlplan.SetIntersect, sqlplan.SetExcept:
	default:
		return Batch{}, fmt.Errorf("set operation %d: %w", s.kind, metadata.ErrInvalidValue)
	}
	if s.kind != sqlplan.SetUnion && !s.rightRead {
		if err := s.readRight(ctx); err != nil {
			return Batch{}, err
		}
		s.rightRead = true
	}
	for {
		if err := ctx.Err(); err != nil {
			return Batch{}, err
		}
		in, side := s.left, "left"
		if s.leftDone {
			if s.kind != sqlplan.SetUnion || s.rightDone {
				return Batch{}, io.EOF
			}
			in, side = s.right, "right"
		}
		b, err := in.Next(ctx)
		if errors.Is(err, io.EOF) {
			if !s.leftDone {
				s.leftDone = true
			} else {
				s.rightDone = true
			}
			continue
		}
		if err != nil {
			return Batch{}, err
		}
		if b.NumRows() == 0 {
			continue
		}
		if err := checkRecord(b.Rec, s.types, fmt.Sprintf("%s %s input", s.kind, side)); err != nil {
			return Batch{}, err
		}
		if s.kind == sqlplan.SetUnion && s.all {
			return b, nil
		}
		s.sel = s.sel[:0]
		s.startBatch(b.Rec)
		rows := s.visible(b)
		for _, r := range rows {
			if s.keep(b.Rec, int(r)) {
				s.sel = append(s.sel, r)
			}
		}
		if err := s.budget.check(s.kind.String(), s.detail); err != nil {
			return Batch{}, err
		}
		if len(s.sel) > 0 {
			return Batch{Rec: b.Rec, Sel: s.sel}, nil
		}
	}
}

func (s *setOp) startBatch(rec arrow.RecordBatch) {
	if s.ints != nil {
		s.getInt = intGetter(rec.Column(0))
	}
}

func (s *setOp) detail() string { return count(int64(s.nids), "distinct row") }

// readRight counts the rows of right, for INTERSECT and EXCEPT.
func (s *setOp) readRight(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := s.right.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			continue
		}
		if err := checkRecord(b.Rec, s.types, fmt.Sprintf("%s right input", s.kind)); err != nil {
			return err
		}
		s.startBatch(b.Rec)
		for _, r := range s.visible(b) {
			id, _ := s.id(b.Rec, int(r), true)
			s.count[id]++
		}
		if err := s.budget.check(s.kind.String(), s.detail); err != nil {
			return err
		}
	}
}

// keep decides whether row r of a left (or, for UNION, right) record is
// yielded.
func (s *setOp) keep(rec arrow.RecordBatch, r int) bool {
	switch s.kind {
	case sqlplan.SetUnion:
		_, fresh := s.id(rec, r, true)
		return fresh
	case sqlplan.SetIntersect:
		id, ok := s.id(rec, r, false)
		if !ok || s.count[id] == 0 {
			return false
		}
		if s.all {
			s.count[id]--
			return true
		}
		s.count[id] = 0 // yielded once: no further copy qualifies
		return true
	default: // sqlplan.SetExcept
		id, ok := s.id(rec, r, !s.all)
		if s.all {
			if ok && s.count[id] > 0 {
				s.count[id]--
				return false
			}
			return true
		}
		if s.count[id] > 0 || s.emitted[id] {
			return false
		}
		s.emitted[id] = true
		return true
	}
}

// id returns the id of row r's value. With add, a row not seen before gets
// a new id and fresh is true; without, ok is false for such a row.
func (s *setOp) id(rec arrow.RecordBatch, r int, add bool) (id int32, ok bool) {
	if s.ints != nil {
		arr := rec.Column(0)
		if arr.IsNull(r) {
			if s.nullID >= 0 {
				return s.nullID, !add
			}
			if !add {
				return 0, false
			}
			s.nullID = s.newID(1)
			return s.nullID, true
		}
		k := s.getInt(r)
		v, slot, found := s.ints.lookup(k)
		if found {
			return v, !add
		}
		if !add {
			return 0, false
		}
		v = s.newID(9)
		s.ints.insert(slot, k, v)
		return v, true
	}
	s.buf = s.buf[:0]
	for c, t := range s.types {
		s.buf = appendKey(s.buf, rec.Column(c), t, r)
	}
	if v, found := s.keys[string(s.buf)]; found {
		return v, !add
	}
	if !add {
		return 0, false
	}
	v := s.newID(len(s.buf))
	s.keys[string(s.buf)] = v
	return v, true
}

func (s *setOp) newID(keyLen int) int32 {
	id := int32(s.nids)
	s.nids++
	s.count = append(s.count, 0)
	s.emitted = append(s.emitted, false)
	s.budget.grow(keyBytes(keyLen) + 9)
	return id
}

func (s *setOp) visible(b Batch) []int32 {
	if b.Sel != nil {
		return b.Sel
	}
	n := b.NumRows()
	for i := len(s.every); i < n; i++ {
		s.every = append(s.every, int32(i))
	}
	return s.every[:n]
}

func (s *setOp) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.ints, s.keys, s.count, s.emitted = nil, nil, nil, nil
	err := s.left.Close()
	if rerr := s.right.Close(); err == nil {
		err = rerr
	}
	return err
}
