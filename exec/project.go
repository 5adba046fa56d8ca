package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Project computes the output columns. Column references pass their
// arrays through untouched; other expressions are evaluated for the
// visible rows (hidden rows are left NULL, so the selection vector stays
// valid).
func Project(in Operator, exprs []sqlplan.Expr, names []string, layout Layout, mem memory.Allocator) (Operator, error) {
	return projectWith(in, exprs, names, layout, mem, nil)
}

// projectWith is Project whose expressions may hold subqueries run by subs.
func projectWith(in Operator, exprs []sqlplan.Expr, names []string, layout Layout, mem memory.Allocator, subs *subqueries) (Operator, error) {
	env := &env{layout: layout, subs: subs}
	p := &projectOp{in: in, mem: mem, env: env, cols: make([]projCol, len(exprs))}
	fields := make([]arrow.Field, len(exprs))
	for i, e := range exprs {
		t := e.Type()
		if t.Root == 0 {
			t = metadata.StringType() // an untyped NULL
		}
		fields[i] = arrow.Field{Name: names[i], Type: t.ArrowType(), Nullable: true}
		if c, ok := e.(*sqlplan.ColumnRef); ok {
			pos, err := columnPos(c, env)
			if err != nil {
				return nil, err
			}
			p.cols[i] = projCol{pos: pos}
			continue
		}
		vb, err := compileValue(e, env)
		if err != nil {
			return nil, err
		}
		p.cols[i] = projCol{pos: -1, eval: vb, t: t}
	}
	p.schema = arrow.NewSchema(fields, nil)
	return p, nil
}

type projCol struct {
	pos  int // record column, or -1 when computed
	eval valueBinder
	t    metadata.DataType
}

type projectOp struct {
	in     Operator
	env    *env
	mem    memory.Allocator
	cols   []projCol
	schema *arrow.Schema
	out    arrow.RecordBatch
}

func (p *projectOp) Next(ctx context.Context) (Batch, error) {
	p.release()
	b, err := p.in.Next(ctx)
	if err != nil {
		return Batch{}, err
	}
	n := int(b.Rec.NumRows())
	p.env.ctx = ctx
	arrs := make([]arrow.Array, len(p.cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, c := range p.cols {
		if c.pos >= 0 {
			a := b.Rec.Column(c.pos)
			a.Retain()
			arrs[i] = a
			continue
		}
		bld := array.NewBuilder(p.mem, c.t.ArrowType())
		f := c.eval(b.Rec)
		vis := 0
		for r := 0; r < n; r++ {
			if vis < b.NumRows() && b.Row(vis) == r {
				vis++
				if err := metadata.AppendValue(bld, c.t, f(r)); err != nil {
					bld.Release()
					return Batch{}, fmt.Errorf("column %s: %w", p.schema.Field(i).Name, err)
				}
				continue
			}
			bld.AppendNull()
		}
		arrs[i] = bld.NewArray()
		bld.Release()
		if err := p.env.takeErr(); err != nil {
			return Batch{}, err
		}
	}
	p.out = array.NewRecordBatch(p.schema, arrs, int64(n))
	return Batch{Rec: p.out, Sel: b.Sel}, nil
}

func (p *projectOp) release() {
	if p.out != nil {
		p.out.Release()
		p.out = nil
	}
}

func (p *projectOp) Close() error {
	p.release()
	return p.in.Close()
}
