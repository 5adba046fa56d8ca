package query

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/exec"
)

// firstColumns passes the first n columns of in's records: a query's
// records may carry its ORDER BY keys after its outputs, which the
// relation above must not see.
func firstColumns(in exec.Operator, n int) exec.Operator {
	if s, ok := in.(exec.Splitter); ok {
		return &splitFirstColumns{firstColumnsOp: firstColumnsOp{in: in, n: n}, split: s}
	}
	return &firstColumnsOp{in: in, n: n}
}

type firstColumnsOp struct {
	in  exec.Operator
	n   int
	out arrow.RecordBatch
}

func (o *firstColumnsOp) Next(ctx context.Context) (exec.Batch, error) {
	o.release()
	b, err := o.in.Next(ctx)
	if err != nil || int(b.Rec.NumCols()) == o.n {
		return b, err
	}
	fields := b.Rec.Schema().Fields()[:o.n]
	o.out = array.NewRecordBatch(arrow.NewSchema(fields, nil), b.Rec.Columns()[:o.n], b.Rec.NumRows())
	return exec.Batch{Rec: o.out, Sel: b.Sel}, nil
}

func (o *firstColumnsOp) release() {
	if o.out != nil {
		o.out.Release()
		o.out = nil
	}
}

func (o *firstColumnsOp) Close() error {
	o.release()
	return o.in.Close()
}

// splitFirstColumns is firstColumns over an input that can be split.
type splitFirstColumns struct {
	firstColumnsOp
	split exec.Splitter
}

// Split splits the input, each part keeping the first n columns.
func (o *splitFirstColumns) Split(ctx context.Context, n int) ([]exec.Operator, error) {
	parts, err := o.split.Split(ctx, n)
	if err != nil {
		return nil, err
	}
	for i, p := range parts {
		parts[i] = firstColumns(p, o.n)
	}
	return parts, nil
}
