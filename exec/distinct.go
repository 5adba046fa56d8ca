package exec

import (
	"context"

	"github.com/flusslite/fluss/metadata"
)

// Distinct passes the first row of each distinct value of the first n
// columns (NULLs equal to each other, as in SQL's DISTINCT) and drops the
// rest. It streams: only the keys seen so far are held.
func Distinct(in Operator, n int, types []metadata.DataType, opts Options) Operator {
	opts = opts.withDefaults()
	d := &distinctOp{in: in, n: n, types: types, seen: map[string]struct{}{}, budget: memBudget{limit: opts.MemoryLimit}}
	if n == 1 && isIntArrow(types[0].ArrowType()) {
		d.ints = newIntMap()
	}
	return d
}

type distinctOp struct {
	in    Operator
	n     int
	types []metadata.DataType
	seen  map[string]struct{}
	// ints holds the values seen of one integer column, nullSeen whether
	// NULL was; seen is unused then.
	ints     *intMap
	nullSeen bool
	rows     []int32
	buf      []byte
	sel      []int32
	budget   memBudget
}

func (d *distinctOp) Next(ctx context.Context) (Batch, error) {
	for {
		b, err := d.in.Next(ctx)
		if err != nil {
			return Batch{}, err
		}
		d.sel = d.sel[:0]
		if d.ints != nil && d.addInts(b) {
			if err := d.budget.check("DISTINCT", func() string { return count(int64(d.ints.n), "distinct row") }); err != nil {
				return Batch{}, err
			}
			if len(d.sel) > 0 {
				return Batch{Rec: b.Rec, Sel: d.sel}, nil
			}
			continue
		}
		for i := 0; i < b.NumRows(); i++ {
			r := b.Row(i)
			d.buf = d.buf[:0]
			for c := 0; c < d.n; c++ {
				d.buf = appendKey(d.buf, b.Rec.Column(c), d.types[c], r)
			}
			if _, dup := d.seen[string(d.buf)]; dup {
				continue
			}
			d.seen[string(d.buf)] = struct{}{}
			d.budget.grow(keyBytes(len(d.buf)))
			d.sel = append(d.sel, int32(r))
		}
		if err := d.budget.check("DISTINCT", func() string { return count(int64(len(d.seen)), "distinct row") }); err != nil {
			return Batch{}, err
		}
		if len(d.sel) > 0 {
			return Batch{Rec: b.Rec, Sel: d.sel}, nil
		}
	}
}

// addInts selects the rows of b holding a value of the integer column not
// seen before, and reports whether the column was an integer array.
func (d *distinctOp) addInts(b Batch) bool {
	rows := b.Sel
	if rows == nil {
		d.rows = resize(d.rows, b.NumRows())
		for i := range d.rows {
			d.rows[i] = int32(i)
		}
		rows = d.rows
	}
	newRow := func(r int32) int32 {
		d.sel = append(d.sel, r)
		// As much as the general path's key: a NULL flag and 8 bytes.
		d.budget.grow(keyBytes(9))
		return 0
	}
	nullRow := func(r int32) int32 {
		if !d.nullSeen {
			d.nullSeen = true
			d.sel = append(d.sel, r)
			d.budget.grow(keyBytes(1))
		}
		return 0
	}
	return intIDsOf(d.ints, b.Rec.Column(0), rows, nil, newRow, nullRow)
}

func (d *distinctOp) Close() error {
	d.seen, d.ints = nil, nil
	return d.in.Close()
}
