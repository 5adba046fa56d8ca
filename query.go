package fluss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/query"
	"github.com/flusslite/fluss/sqlplan"
)

// path the query takes.
func (s *Stmt) bindSelect(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) (*sqlplan.SelectPlan, error) {
	if err := planner.CheckOptions(sel.Hints); err != nil {
		return nil, fmt.Errorf("OPTIONS hint: %w", err)
	}
	return sqlplan.BindSelect(ctx, sel, sessionCatalog{eng: s.engine()}, s.conn.database, args)
}

func (s *Stmt) explain(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) ([]string, error) {
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	r := s.reader()
	if sp.Source != nil {
		// Opening plans every table and decides how each join runs,
		// which the tree then shows; nothing is read.
		op, a, err := query.OpenAnalyzed(ctx, r, sp, r.Exec)
		if err != nil {
			return nil, err
		}
		if err := op.Close(); err != nil {
			return nil, err
		}
		lines, err := r.ExplainTree(ctx, sp, a.Note)
		if err != nil {
			return nil, err
		}
		return s.explainSubqueries(ctx, sp, lines)
	}
	lines, err := r.Explain(ctx, sp)
	if err != nil {
		return nil, err
	}
	return s.explainSubqueries(ctx, sp, lines)
}

// reader is the single-table read of this statement: the connection's
// engine and lake, the transaction's read view inside one, and the
// handle's scan and operator options.
func (s *Stmt) reader() *query.Session {
	cfg := s.conn.connector.cfg
	return &query.Session{
		Engine:             s.engine(),
		Lake:               s.lake(),
		View:               s.conn.readView(),
		Exec:               s.execOptions(),
		MaxRecordsPerSplit: cfg.MaxRecordsPerSplit,
		Threads:            cfg.Threads,
		InfoSchema:         s.openInfoSchema,
	}
}

func (s *Stmt) execOptions() exec.Options {
	return exec.Options{MemoryLimit: s.conn.connector.cfg.MemoryLimit, Subqueries: subqueryRunner{s: s}}
}

// resultColumns describes the outputs of a plan: their names, types and
// nullability.
func resultColumns(sp *sqlplan.SelectPlan) []resultColumn {
	cols := make([]resultColumn, len(sp.Output))
	for i, o := range sp.Output {
		t := o.Expr.Type()
		if t.Root == 0 {
			t = metadata.StringType() // a bare NULL
		}
		cols[i] = resultColumn{name: o.Name, typ: t, nullable: nullable(sp, o.Expr)}
	}
	return cols
}

// nullable reports whether an output may be NULL: a NOT NULL column, a
// COUNT, or a constant other than NULL cannot (a column stays NOT NULL
// through GROUP BY); anything else may.
func nullable(sp *sqlplan.SelectPlan, e sqlplan.Expr) bool {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		if !sp.From || x.Index < 0 || x.Index >= len(sp.Table.Schema.Columns) {
			return true
		}
		return !sp.Table.Schema.Columns[x.Index].NotNull
	case *sqlplan.Literal:
		return x.Value == nil
	case *sqlplan.Func:
		return x.Name != "count"
	}
	return true
}

func schemaColumns(t *metadata.TableInfo) []resultColumn {
	cols := make([]resultColumn, len(t.Schema.Columns))
	for i, c := range t.Schema.Columns {
		cols[i] = resultColumn{name: c.Name, typ: c.Type, nullable: !c.NotNull}
	}
	return cols
}

func (s *Stmt) selectRows(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) (*Rows, error) {
	if rows, ok, err := s.lookupRows(ctx, args); ok {
		return rows, err
	}
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	op, err := s.reader().OpenSelect(ctx, sp, func() { s.prepareLookup(sel, sp) })
	if err != nil {
		return nil, err
	}
	return newRows(ctx, resultColumns(sp), op, s.converter()), nil
}

// readRows runs a bound SELECT and returns the values of exprs for every
// row it yields, in canonical form: the read half of UPDATE and DELETE.
func (s *Stmt) readRows(ctx context.Context, sp *sqlplan.SelectPlan, exprs []sqlplan.Expr) ([][]any, error) {
	op, err := s.reader().OpenExprs(ctx, sp, exprs)
	if err != nil {
		return nil, err
	}
	types := make([]metadata.DataType, len(exprs))
	for i, e := range exprs {
		types[i] = e.Type()
	}
	return collectRows(ctx, op, types, nil)
}

// collectRows reads every row op yields, in canonical form (types are
// its columns'), and closes op. A non-nil budget is charged for the rows
// held.
func collectRows(ctx context.Context, op exec.Operator, types []metadata.DataType, budget *rowBudget) ([][]any, error) {
	defer op.Close()
	var out [][]any
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for r := 0; r < b.NumRows(); r++ {
			row := make([]any, len(types))
			for c := range types {
				row[c] = metadata.ValueAt(b.Rec.Column(c), types[c], b.Row(r))
			}
			out = append(out, row)
			if err := budget.charge(row); err != nil {
				return nil, err
			}
		}
	}
}

func (s *Stmt) showPartitions(ctx context.Context, path metadata.TablePath) (*Rows, error) {
	eng := s.engine()
	info, err := eng.TableInfo(ctx, path)
	if err != nil {
		return nil, err
	}
	if !info.IsPartitioned() {
		return nil, fmt.Errorf("table %s is not partitioned", path)
	}
	parts, err := eng.ListPartitions(ctx, path)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(parts))
	for i, p := range parts {
		spec := make([]string, len(p.Values))
		for j, v := range p.Values {
			spec[j] = info.PartitionKeys[j] + "=" + v
		}
		rows[i] = []any{p.Name, strings.Join(spec, "/"), p.ID}
	}
	return s.static(ctx, []resultColumn{
		{name: "partition_name", typ: metadata.StringType()},
		{name: "partition_spec", typ: metadata.StringType()},
		{name: "partition_id", typ: metadata.BigIntType()},
	}, rows)
}

func (s *Stmt) describe(ctx context.Context, path metadata.TablePath) (*Rows, error) {
	info, err := s.engine().TableInfo(ctx, path)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(info.Schema.Columns))
	for i, c := range info.Schema.Columns {
		var key []string
		for _, k := range info.Schema.PrimaryKey {
			if strings.EqualFold(k, c.Name) {
				key = append(key, "PRI")
			}
		}
		if info.IsPartitionKey(c.Name) {
			key = append(key, "PART")
		}
		for _, k := range info.BucketKeys {
			if strings.EqualFold(k, c.Name) {
				key = append(key, "BUCKET")
			}
		}
		var comment any
		if c.Comment != "" {
			comment = c.Comment
		}
		rows[i] = []any{c.Name, c.Type.String(), !c.NotNull, strings.Join(key, ","), comment}
	}
	return s.static(ctx, describeColumns, rows)
}

// describeColumns are the columns of DESCRIBE's result.
var describeColumns = []resultColumn{
	{name: "name", typ: metadata.StringType()},
	{name: "type", typ: metadata.StringType()},
	{name: "null", typ: metadata.BooleanType()},
	{name: "key", typ: metadata.StringType()},
	{name: "comment", typ: metadata.StringType(), nullable: true},
}

// static returns rows built in memory (SHOW, DESCRIBE, EXPLAIN).
func (s *Stmt) static(ctx context.Context, cols []resultColumn, rows [][]any) (*Rows, error) {
	rec, err := buildRecord(cols, rows)
	if err != nil {
		return nil, err
	}
	return newRows(ctx, cols, query.NewStatic(rec), s.converter()), nil
}

func buildRecord(cols []resultColumn, rows [][]any) (arrow.RecordBatch, error) {
	mcols := make([]metadata.Column, len(cols))
	for i, c := range cols {
		mcols[i] = metadata.Column{Name: c.name, Type: c.typ, NotNull: !c.nullable}
	}
	return query.BuildRecord(mcols, rows)
}
