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
	return &distinctOp{in: in, n: n, types: types, seen: map[string]struct{}{}, budget: memBudget{limit: opts.MemoryLimit}}
}

type distinctOp struct {
	in     Operator
	n      int
	types  []metadata.DataType
	seen   map[string]struct{}
	buf    []byte
	sel    []int32
	budget memBudget
}

func (d *distinctOp) Next(ctx context.Context) (Batch, error) {
	for {
		b, err := d.in.Next(ctx)
		if err != nil {
			return Batch{}, err
		}
		d.sel = d.sel[:0]
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

func (d *distinctOp) Close() error {
	d.seen = nil
	return d.in.Close()
}
