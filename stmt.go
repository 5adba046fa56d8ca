package fluss

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/pushdown"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// Stmt is a parsed statement. It is bound to the catalog and its arguments
// each time it runs, so a prepared statement sees tables created after it
// was prepared. Like its connection, it is used by one goroutine at a time.
type Stmt struct {
	conn   *Conn
	text   string
	parsed sqlplan.Statement
	closed bool
}

var (
	_ driver.Stmt             = (*Stmt)(nil)
	_ driver.StmtExecContext  = (*Stmt)(nil)
	_ driver.StmtQueryContext = (*Stmt)(nil)
)

// NumInput is the number of placeholders.
func (s *Stmt) NumInput() int { return s.parsed.NumInput() }

// Close closes the statement. Idempotent.
func (s *Stmt) Close() error {
	s.closed = true
	return nil
}

// Exec runs the statement; use ExecContext.
func (s *Stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), valuesToNamed(args))
}

// Query runs the statement; use QueryContext.
func (s *Stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), valuesToNamed(args))
}

func valuesToNamed(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

func toArgs(args []driver.NamedValue) []sqlplan.Arg {
	out := make([]sqlplan.Arg, len(args))
	for i, a := range args {
		out[i] = sqlplan.Arg{Ordinal: a.Ordinal, Name: a.Name, Value: a.Value}
	}
	return out
}

// ExecContext runs the statement and reports the rows it wrote.
func (s *Stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	switch st := s.parsed.(type) {
	case *sqlplan.Insert:
		n, err := s.insert(ctx, st, toArgs(args))
		if err != nil {
			return nil, wrapErr(err)
		}
		return result{rowsAffected: n}, nil
	case *sqlplan.Select, *sqlplan.Explain, *sqlplan.ShowDatabases, *sqlplan.ShowTables,
		*sqlplan.ShowPartitions, *sqlplan.Describe, *sqlplan.Call:
		rows, err := s.QueryContext(ctx, args)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		dest := make([]driver.Value, len(rows.Columns()))
		for {
			if err := rows.Next(dest); err != nil {
				if err == io.EOF {
					return result{}, nil
				}
				return nil, err
			}
		}
	}
	if err := s.execDDL(ctx); err != nil {
		return nil, wrapErr(err)
	}
	return result{}, nil
}

// QueryContext runs the statement and returns its rows. Statements that
// return nothing (DDL, INSERT) run and return an empty result.
func (s *Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, toArgs(args))
	if err != nil {
		return nil, wrapErr(err)
	}
	return rows, nil
}

func (s *Stmt) check(ctx context.Context) error {
	if s.closed {
		return wrapErr(fmt.Errorf("statement is closed: %w", metadata.ErrClosed))
	}
	if err := s.conn.check(); err != nil {
		return err
	}
	return ctx.Err()
}

func (s *Stmt) engine() *storage.Engine { return s.conn.connector.shared.engine }

func (s *Stmt) converter() *converter {
	return &converter{loc: s.conn.connector.cfg.Location}
}

// path fills in the current database of an unqualified table name.
func (s *Stmt) path(p metadata.TablePath) metadata.TablePath {
	if p.Database == "" {
		p.Database = s.conn.database
	}
	return p
}

func (s *Stmt) query(ctx context.Context, args []sqlplan.Arg) (*Rows, error) {
	eng := s.engine()
	switch st := s.parsed.(type) {
	case *sqlplan.Select:
		return s.selectRows(ctx, st, args)
	case *sqlplan.Explain:
		lines, err := s.explain(ctx, st.Select, args)
		if err != nil {
			return nil, err
		}
		rows := make([][]any, len(lines))
		for i, l := range lines {
			rows[i] = []any{l}
		}
		return s.static(ctx, []resultColumn{{name: "plan", typ: metadata.StringType()}}, rows)
	case *sqlplan.ShowDatabases:
		dbs, err := eng.ListDatabases(ctx)
		if err != nil {
			return nil, err
		}
		return s.static(ctx, []resultColumn{{name: "database_name", typ: metadata.StringType()}}, column(dbs))
	case *sqlplan.ShowTables:
		db := st.Database
		if db == "" {
			db = s.conn.database
		}
		tables, err := eng.ListTables(ctx, db)
		if err != nil {
			return nil, err
		}
		return s.static(ctx, []resultColumn{{name: "table_name", typ: metadata.StringType()}}, column(tables))
	case *sqlplan.ShowPartitions:
		return s.showPartitions(ctx, s.path(st.Table))
	case *sqlplan.Describe:
		return s.describe(ctx, s.path(st.Table))
	case *sqlplan.Call:
		return nil, fmt.Errorf("procedure %s is not available yet: %w", st.Procedure, metadata.ErrUnsupported)
	case *sqlplan.Insert:
		if _, err := s.insert(ctx, st, args); err != nil {
			return nil, err
		}
		return s.static(ctx, nil, nil)
	}
	if err := s.execDDL(ctx); err != nil {
		return nil, err
	}
	return s.static(ctx, nil, nil)
}

// execDDL runs a statement that returns no rows.
func (s *Stmt) execDDL(ctx context.Context) error {
	eng := s.engine()
	switch st := s.parsed.(type) {
	case *sqlplan.CreateDatabase:
		return eng.CreateDatabase(ctx, st.Name, st.IfNotExists)
	case *sqlplan.DropDatabase:
		if err := eng.DropDatabase(ctx, st.Name, st.IfExists, st.Cascade); err != nil {
			return err
		}
		if strings.EqualFold(st.Name, s.conn.database) {
			s.conn.database = metadata.DefaultDatabase
		}
		return nil
	case *sqlplan.CreateTable:
		desc := st.Table
		desc.Path = s.path(desc.Path)
		_, err := eng.CreateTable(ctx, desc, st.IfNotExists)
		return err
	case *sqlplan.DropTable:
		return eng.DropTable(ctx, s.path(st.Table), st.IfExists)
	case *sqlplan.AddPartition:
		_, err := eng.CreatePartition(ctx, s.path(st.Table), specMap(st.Spec), st.IfNotExists)
		return err
	case *sqlplan.DropPartition:
		return eng.DropPartition(ctx, s.path(st.Table), specMap(st.Spec), st.IfExists)
	case *sqlplan.SetOptions:
		_, err := eng.AlterTable(ctx, s.path(st.Table), st.Options)
		return err
	case *sqlplan.AddColumn:
		return fmt.Errorf("ALTER TABLE ... ADD COLUMN is not supported yet: %w", metadata.ErrUnsupported)
	case *sqlplan.Use:
		dbs, err := eng.ListDatabases(ctx)
		if err != nil {
			return err
		}
		for _, d := range dbs {
			if strings.EqualFold(d, st.Database) {
				s.conn.database = d
				return nil
			}
		}
		return fmt.Errorf("database %s does not exist: %w", st.Database, metadata.ErrNotFound)
	}
	return fmt.Errorf("statement %T: %w", s.parsed, metadata.ErrUnsupported)
}

func specMap(spec []sqlplan.PartitionValue) map[string]string {
	m := make(map[string]string, len(spec))
	for _, kv := range spec {
		m[kv.Key] = kv.Value
	}
	return m
}

func column(values []string) [][]any {
	rows := make([][]any, len(values))
	for i, v := range values {
		rows[i] = []any{v}
	}
	return rows
}

func (s *Stmt) insert(ctx context.Context, ins *sqlplan.Insert, args []sqlplan.Arg) (int64, error) {
	eng := s.engine()
	if ins.Select != nil {
		return 0, fmt.Errorf("INSERT ... SELECT is not supported yet: %w", metadata.ErrUnsupported)
	}
	plan, err := sqlplan.BindInsert(ctx, ins, eng, s.conn.database, args)
	if err != nil {
		return 0, err
	}
	if plan.Table.HasPrimaryKey() {
		return 0, fmt.Errorf("writing primary-key table %s is not supported yet: %w", plan.Table.Path, metadata.ErrUnsupported)
	}
	return eng.Append(ctx, plan.Table.Path, plan.Rows)
}

// scanPlan is a bound, planned SELECT: everything needed to read it.
type scanPlan struct {
	sel     *sqlplan.SelectPlan
	spec    planner.ScanSpec
	pd      pushdown.Result
	planner *planner.AppendPlanner
	splits  []planner.Split
}

func (s *Stmt) plan(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) (*scanPlan, error) {
	if !sel.From {
		return nil, fmt.Errorf("SELECT without FROM is not supported yet: %w", metadata.ErrUnsupported)
	}
	sp, err := sqlplan.BindSelect(ctx, sel, s.engine(), s.conn.database, args)
	if err != nil {
		return nil, err
	}
	switch {
	case len(sp.GroupBy) > 0 || sp.Having != nil:
		return nil, fmt.Errorf("GROUP BY and HAVING are not supported yet: %w", metadata.ErrUnsupported)
	case len(sp.OrderBy) > 0:
		return nil, fmt.Errorf("ORDER BY is not supported yet: %w", metadata.ErrUnsupported)
	case sp.Distinct:
		return nil, fmt.Errorf("SELECT DISTINCT is not supported yet: %w", metadata.ErrUnsupported)
	}
	for _, o := range sp.Output {
		if hasAggregate(o.Expr) {
			return nil, fmt.Errorf("aggregate %s is not supported yet: %w", o.Expr, metadata.ErrUnsupported)
		}
	}
	if sp.Table.HasPrimaryKey() {
		return nil, fmt.Errorf("reading primary-key table %s is not supported yet: %w", sp.Table.Path, metadata.ErrUnsupported)
	}
	pd := pushdown.Split(&sp.Table, sp.Where)
	spec := planner.ScanSpec{
		Table:           sp.Table.Path,
		Projection:      sp.Columns,
		PartitionFilter: pd.PartitionFilter,
		PushedPredicate: pd.Pushed,
		Limit:           -1,
		Options:         s.scanOptions(sp.Hints),
	}
	if len(pd.PostFilter) == 0 && sp.Limit >= 0 {
		spec.Limit = sp.Limit + sp.Offset
	}
	p, err := planner.NewAppendPlanner(ctx, s.engine(), sp.Table, spec)
	if err != nil {
		return nil, err
	}
	splits, err := p.Plan(ctx)
	if err != nil {
		p.Close()
		return nil, err
	}
	return &scanPlan{sel: sp, spec: spec, pd: pd, planner: p, splits: splits}, nil
}

func hasAggregate(e sqlplan.Expr) bool {
	found := false
	sqlplan.Walk(e, func(x sqlplan.Expr) bool {
		if f, ok := x.(*sqlplan.Func); ok {
			switch f.Name {
			case "count", "sum", "min", "max", "avg":
				found = true
			}
		}
		return !found
	})
	return found
}

// scanOptions merges the DSN's scan options with the query's hints; a
// hint wins.
func (s *Stmt) scanOptions(hints map[string]string) map[string]string {
	opts := map[string]string{}
	if n := s.conn.connector.cfg.MaxRecordsPerSplit; n > 0 {
		opts[planner.OptMaxRecordsPerSplit] = fmt.Sprint(n)
	}
	for k, v := range hints {
		opts[k] = v
	}
	return opts
}

func (s *Stmt) explain(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) ([]string, error) {
	sp, err := s.plan(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	defer sp.planner.Close()
	post := make([]string, len(sp.pd.PostFilter))
	for i, e := range sp.pd.PostFilter {
		post[i] = e.String()
	}
	return planner.Explain(sp.sel.Table, sp.spec, sp.planner, sp.splits, post), nil
}

func (s *Stmt) selectRows(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) (*Rows, error) {
	sp, err := s.plan(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	sp.planner.Close()
	table := &sp.sel.Table
	scan := lakeunion.NewScan(s.engine(), table, sp.splits, lakeunion.Options{
		Projection: sp.sel.Columns,
		Filter:     sp.pd.Pushed,
	})
	layout := exec.NewLayout(len(table.Schema.Columns), sp.sel.Columns)
	var op exec.Operator = exec.Scan(scan)
	if op, err = exec.Filter(op, sp.pd.PostFilter, layout); err != nil {
		scan.Close()
		return nil, err
	}
	if sp.sel.Limit >= 0 || sp.sel.Offset > 0 {
		op = exec.Limit(op, sp.sel.Offset, sp.sel.Limit)
	}
	exprs := make([]sqlplan.Expr, len(sp.sel.Output))
	names := make([]string, len(sp.sel.Output))
	cols := make([]resultColumn, len(sp.sel.Output))
	for i, o := range sp.sel.Output {
		exprs[i], names[i] = o.Expr, o.Name
		cols[i] = resultColumn{name: o.Name, typ: o.Expr.Type(), nullable: true}
		if c, ok := o.Expr.(*sqlplan.ColumnRef); ok {
			cols[i].nullable = !table.Schema.Columns[c.Index].NotNull
		}
	}
	if op, err = exec.Project(op, exprs, names, layout, memory.DefaultAllocator); err != nil {
		scan.Close()
		return nil, err
	}
	return newRows(ctx, cols, op, s.converter()), nil
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
	return s.static(ctx, []resultColumn{
		{name: "name", typ: metadata.StringType()},
		{name: "type", typ: metadata.StringType()},
		{name: "null", typ: metadata.BooleanType()},
		{name: "key", typ: metadata.StringType()},
		{name: "comment", typ: metadata.StringType(), nullable: true},
	}, rows)
}

// static returns rows built in memory (SHOW, DESCRIBE, EXPLAIN).
func (s *Stmt) static(ctx context.Context, cols []resultColumn, rows [][]any) (*Rows, error) {
	rec, err := buildRecord(cols, rows)
	if err != nil {
		return nil, err
	}
	return newRows(ctx, cols, &staticOp{rec: rec}, s.converter()), nil
}

func buildRecord(cols []resultColumn, rows [][]any) (arrow.RecordBatch, error) {
	mcols := make([]metadata.Column, len(cols))
	for i, c := range cols {
		mcols[i] = metadata.Column{Name: c.name, Type: c.typ, NotNull: !c.nullable}
	}
	schema := metadata.ArrowSchema(mcols)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, row := range rows {
		for i, v := range row {
			if err := metadata.AppendValue(b.Field(i), cols[i].typ, v); err != nil {
				return nil, err
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// staticOp yields one prepared record batch.
type staticOp struct {
	rec  arrow.RecordBatch
	done bool
}

func (o *staticOp) Next(context.Context) (exec.Batch, error) {
	if o.done || o.rec == nil {
		return exec.Batch{}, io.EOF
	}
	o.done = true
	return exec.Batch{Rec: o.rec}, nil
}

func (o *staticOp) Close() error {
	if o.rec != nil {
		o.rec.Release()
		o.rec = nil
	}
	return nil
}

// result is the driver.Result of Exec.
type result struct {
	rowsAffected int64
}

func (r result) LastInsertId() (int64, error) {
	return 0, wrapErr(fmt.Errorf("LastInsertId needs a table with an auto-increment column: %w", metadata.ErrUnsupported))
}

func (r result) RowsAffected() (int64, error) { return r.rowsAffected, nil }
