package fluss

import (
	"context"
	"errors"
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
	"github.com/flusslite/fluss/query"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// scanPlan is a bound, planned SELECT: everything needed to read it. It
// is either a point lookup (lookup non-nil) or a scan of splits.
type scanPlan struct {
	sel *sqlplan.SelectPlan
	// lookup is the key row of a point lookup; residual are the WHERE
	// conjuncts the key does not answer.
	lookup   []any
	residual []sqlplan.Expr
	spec     planner.ScanSpec
	pd       pushdown.Result
	planner  planner.SplitPlanner
	splits   []planner.Split
	// pins keep the planned KV snapshots until the read is done.
	pins []func()
}

// bindSelect binds a SELECT to the catalog and the connection's current
// database.
// Hint options are checked here, before the plan forks into a lookup, a
// scan or a SELECT without FROM, so an unknown one is refused whatever
// path the query takes.
func (s *Stmt) bindSelect(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) (*sqlplan.SelectPlan, error) {
	if err := planner.CheckOptions(sel.Hints); err != nil {
		return nil, fmt.Errorf("OPTIONS hint: %w", err)
	}
	return sqlplan.BindSelect(ctx, sel, sessionCatalog{eng: s.engine()}, s.conn.database, args)
}

// keepsEveryRow reports whether everything above the scan passes each row
// it reads on, in order, until the limit: no post-scan filter, aggregate,
// DISTINCT or ORDER BY. Only then may the scan itself stop at the limit.
func keepsEveryRow(sp *sqlplan.SelectPlan, post []sqlplan.Expr) bool {
	if len(post) > 0 || sp.Distinct || len(sp.OrderBy) > 0 {
		return false
	}
	q := exec.QueryOf(sp)
	return !q.Aggregated()
}

// planScan plans a bound SELECT: a point lookup when the WHERE pins the
// whole primary key, else the planner of the table's kind.
func (s *Stmt) planScan(ctx context.Context, sp *sqlplan.SelectPlan) (*scanPlan, error) {
	if !sp.From || sp.Source != nil {
		return nil, fmt.Errorf("planScan of a query that is not a read of one table: %w", metadata.ErrUnsupported)
	}
	if isInfoSchema(sp) {
		return nil, fmt.Errorf("%s is answered from the catalog, not planned as a scan: %w", sp.Table.Path, metadata.ErrUnsupported)
	}
	if sp.Virtual == "" && sp.Table.HasPrimaryKey() {
		if key, residual, ok := sqlplan.PointLookup(sp); ok {
			return &scanPlan{sel: sp, lookup: key, residual: residual}, nil
		}
	}
	return s.planSplits(ctx, sp)
}

// planSplits plans a bound SELECT as a scan of splits by the planner of
// the table's kind; a point lookup whose partition is only in the lake
// comes here too.
func (s *Stmt) planSplits(ctx context.Context, sp *sqlplan.SelectPlan) (*scanPlan, error) {
	base := &sp.Table
	if sp.Virtual != "" {
		base = &sp.Base
	}
	var lakeOpts []planner.Option
	if v := s.conn.readView(); v != nil {
		// In a transaction every scan plans at its read view.
		lakeOpts = append(lakeOpts, planner.WithReadView(v))
	}
	var lakeFilter pushdown.LakeFilter
	if base.Config.DatalakeEnabled {
		src := s.lake().Source(base)
		lakeOpts = append(lakeOpts, planner.WithLake(src))
		lakeFilter = src.WithFilters
	}
	pd := pushdown.SplitWithLake(&sp.Table, sp.Where, lakeFilter)
	// Splitting a huge WHERE takes a while; a statement past its deadline
	// stops here rather than plan splits it will not read.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	spec := planner.ScanSpec{
		Table:           sp.Table.Path,
		Projection:      sp.Columns,
		PartitionFilter: pd.PartitionFilter,
		PushedPredicate: pd.Pushed,
		Limit:           -1,
		Options:         s.scanOptions(sp.Hints),
	}
	if sp.Limit >= 0 && keepsEveryRow(sp, pd.PostFilter) {
		spec.Limit = sp.Limit + sp.Offset
	}
	var (
		p   planner.SplitPlanner
		err error
	)
	if sp.Virtual == sqlplan.VirtualLake {
		lakeOpts = append(lakeOpts, planner.WithLakeOnly())
	}
	switch {
	case sp.Virtual == sqlplan.VirtualChangelog:
		var opts []planner.Option
		if v := s.conn.readView(); v != nil {
			opts = append(opts, planner.WithReadView(v))
		}
		p, err = planner.NewChangelogPlanner(ctx, s.engine(), sp.Base, spec, opts...)
	case base.HasPrimaryKey():
		p, err = planner.NewUpsertPlanner(ctx, s.engine(), *base, spec, lakeOpts...)
	default:
		p, err = planner.NewAppendPlanner(ctx, s.engine(), *base, spec, lakeOpts...)
	}
	if err != nil {
		return nil, err
	}
	plan := &scanPlan{sel: sp, spec: spec, pd: pd, planner: p}
	// A snapshot taken between planning and pinning may have removed a
	// planned one; planning again sees the newer snapshot.
	for attempt := 0; ; attempt++ {
		if plan.splits, err = p.Plan(ctx); err == nil {
			if err = s.pinSnapshots(plan); err == nil || attempt == 2 || !errors.Is(err, metadata.ErrNotFound) {
				break
			}
		} else {
			break
		}
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return plan, nil
}

// pinSnapshots pins every KV snapshot the splits read.
func (s *Stmt) pinSnapshots(p *scanPlan) error {
	for _, sp := range p.splits {
		kv, ok := sp.(*planner.KvLogSplit)
		if !ok || !kv.HasSnapshot() {
			continue
		}
		release, err := s.engine().PinKvSnapshot(kv.TableBucket, kv.SnapshotID)
		if err != nil {
			p.unpin()
			return err
		}
		p.pins = append(p.pins, release)
	}
	return nil
}

// close releases the planner of a plan; its pins stay until unpin.
func (p *scanPlan) close() {
	if p.planner != nil {
		p.planner.Close()
	}
}

// unpin releases the plan's KV snapshots.
func (p *scanPlan) unpin() {
	for _, release := range p.pins {
		release()
	}
	p.pins = nil
}

// unpinOnClose releases a plan's snapshots when the operator closes.
type unpinOnClose struct {
	exec.Operator
	plan *scanPlan
}

// EstimatedRows bounds the rows the read yields before its filters: a
// point lookup at most one, a scan what its splits hold (see
// planner.EstimateRows). A join holds the smaller side by it.
func (u *unpinOnClose) EstimatedRows() int64 {
	if u.plan.lookup != nil {
		return 1
	}
	return planner.EstimateRows(u.plan.splits)
}

func (u *unpinOnClose) Close() error {
	err := u.Operator.Close()
	u.plan.unpin()
	return err
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
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	if sp.Source != nil {
		// Opening plans every table and decides how each join runs,
		// which the tree then shows; nothing is read.
		op, a, err := query.OpenAnalyzed(ctx, tableReader{s}, sp, s.execOptions())
		if err != nil {
			return nil, err
		}
		if err := op.Close(); err != nil {
			return nil, err
		}
		lines, err := s.explainTree(ctx, sp, a.Note)
		if err != nil {
			return nil, err
		}
		return s.explainSubqueries(ctx, sp, lines)
	}
	lines, err := s.explainPlan(ctx, sp)
	if err != nil {
		return nil, err
	}
	return s.explainSubqueries(ctx, sp, lines)
}

// explainPlan prints the plan of a query of one table, or of none.
func (s *Stmt) explainPlan(ctx context.Context, sp *sqlplan.SelectPlan) ([]string, error) {
	if !sp.From {
		return []string{"Values: 1 row (no FROM)"}, nil
	}
	if isInfoSchema(sp) {
		return []string{fmt.Sprintf("InformationSchema: [%s]", sp.Table.Path)}, nil
	}
	p, err := s.planScan(ctx, sp)
	if err != nil {
		return nil, err
	}
	defer p.close()
	defer p.unpin()
	if p.lookup != nil {
		return explainLookup(p), nil
	}
	post := make([]string, len(p.pd.PostFilter))
	for i, e := range p.pd.PostFilter {
		post[i] = e.String()
	}
	return planner.Explain(p.sel.Table, p.spec, p.planner, p.splits, post), nil
}

// explainLookup describes a point lookup: the key it reads from the live
// KV state and what is left to filter.
func explainLookup(p *scanPlan) []string {
	t := &p.sel.Table
	var key []string
	for _, i := range t.PrimaryKeyIndexes() {
		c := t.Schema.Columns[i]
		key = append(key, metadata.QuoteIdent(c.Name)+" = "+metadata.FormatLiteral(c.Type, p.lookup[i]))
	}
	lines := []string{
		fmt.Sprintf("FlussLookup: [%s], Type: [Upsert] [Key: %s]", t.Path, strings.Join(key, ", ")),
		"Branch: point-lookup",
	}
	if len(p.residual) > 0 {
		post := make([]string, len(p.residual))
		for i, e := range p.residual {
			post[i] = e.String()
		}
		lines = append(lines, "PostFilter: "+strings.Join(post, " AND "))
	}
	return lines
}

// open builds the operator chain of a plan: the scan (or lookup), then
// exec.Build's post-scan filter, aggregation, HAVING, outputs, DISTINCT,
// ORDER BY, OFFSET and LIMIT. q is the query above the scan; its Filter is
// set here from what pushdown left.
func (s *Stmt) open(ctx context.Context, p *scanPlan, q exec.Query) (exec.Operator, error) {
	sp := p.sel
	table := &sp.Table
	var (
		op     exec.Operator
		layout exec.Layout
	)
	if p.lookup != nil {
		lookup := s.engine().Lookup
		if v := s.conn.readView(); v != nil {
			// In a transaction the key is read in its view.
			lookup = v.Lookup
		}
		row, found, err := lookup(ctx, table.Path, p.lookup)
		if errors.Is(err, storage.ErrLookupInLake) {
			// The partition was dropped after it was tiered: the lake
			// still answers for it, as a scan of it does.
			np, err := s.planSplits(ctx, sp)
			if err != nil {
				return nil, err
			}
			np.close()
			*p = *np
			return s.open(ctx, p, q)
		}
		if err != nil {
			p.unpin()
			return nil, err
		}
		var rows [][]any
		if found {
			rows = [][]any{row}
		}
		all := make([]int, len(table.Schema.Columns))
		for i := range all {
			all[i] = i
		}
		rec, err := buildRecord(schemaColumns(table), rows)
		if err != nil {
			p.unpin()
			return nil, err
		}
		op = &staticOp{rec: rec}
		layout = exec.NewLayout(len(all), all)
		q.Filter = p.residual
	} else {
		scan := s.newScan(p)
		op = exec.Scan(scan)
		layout = exec.NewLayout(len(table.Schema.Columns), sp.Columns)
		q.Filter = p.pd.PostFilter
	}
	out, err := exec.Build(op, q, layout, s.execOptions())
	if err != nil {
		op.Close()
		p.unpin()
		return nil, err
	}
	return &unpinOnClose{Operator: out, plan: p}, nil
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
	op, err := s.openSelect(ctx, sp, func() { s.prepareLookup(sel, sp) })
	if err != nil {
		return nil, err
	}
	return newRows(ctx, resultColumns(sp), op, s.converter()), nil
}

// readRows runs a bound SELECT and returns the values of exprs for every
// row it yields, in canonical form: the read half of UPDATE and DELETE.
func (s *Stmt) readRows(ctx context.Context, sp *sqlplan.SelectPlan, exprs []sqlplan.Expr) ([][]any, error) {
	p, err := s.planScan(ctx, sp)
	if err != nil {
		return nil, err
	}
	p.close()
	q := exec.Query{Output: exprs, Limit: sp.Limit, Offset: sp.Offset}
	types := make([]metadata.DataType, len(exprs))
	for i, e := range exprs {
		q.Names = append(q.Names, fmt.Sprintf("c%d", i))
		types[i] = e.Type()
	}
	op, err := s.open(ctx, p, q)
	if err != nil {
		return nil, err
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

// newScan builds the split scan of a planned SELECT: its projection,
// pushed predicate, workers and, when nothing above the scan drops or
// reorders rows, its limit.
func (s *Stmt) newScan(p *scanPlan) *lakeunion.Scan {
	sp := p.sel
	opts := lakeunion.Options{
		Projection: sp.Columns,
		Filter:     p.pd.Pushed,
		Threads:    s.conn.connector.cfg.Threads,
		Limit:      -1,
	}
	if sp.Limit >= 0 && keepsEveryRow(sp, p.pd.PostFilter) {
		opts.Limit = sp.Limit + sp.Offset
	}
	read := &sp.Table
	switch sp.Virtual {
	case sqlplan.VirtualChangelog:
		// The changelog scan reads the base table and prepends the
		// system columns; the projection is in the virtual schema.
		opts.Changelog = true
		read = &sp.Base
	case sqlplan.VirtualLake:
		read = &sp.Base
	}
	return lakeunion.NewSourceScan(lakeunion.EngineSource(s.engine(), s.lake()), read, p.splits, opts)
}
