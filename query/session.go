package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/pushdown"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// InfoSchemaDB is the read-only database that describes the catalog, as
// in MySQL: ORMs (GORM's HasTable and ColumnTypes) and tools query it.
const InfoSchemaDB = "information_schema"

// IsInfoSchema reports whether a bound SELECT reads information_schema,
// or a table's `t$lake$snapshots`: tables answered in memory from the
// catalog and the lake's manifests, never planned as a scan.
func IsInfoSchema(sp *sqlplan.SelectPlan) bool {
	return sp.From && (sp.Table.Path.Database == InfoSchemaDB || sp.Virtual == sqlplan.VirtualLakeSnapshots)
}

// Session runs one statement of a connection: it binds the statement
// against the catalog in the current database, reads through the
// single-table path (a point lookup or a scan of the table's planned
// splits, a SELECT without FROM, and their EXPLAIN and EXPLAIN ANALYZE)
// and, over it, the operator trees of Open and OpenCompound, and writes
// with one storage.Engine.Commit or into the transaction's write buffer.
// It is the Reader of the queries over a FROM tree and of the set
// operations the statement runs. The connection builds one per statement
// (NewSession) from its state; USE and DROP DATABASE leave the new
// current database in Database. A session is used by one goroutine at a
// time; the results it opens may outlive the statement and read at the
// view it held.
type Session struct {
	Engine *storage.Engine
	Lake   *lake.Lake
	// Tiering runs CALL sys.tier and removes the lake files of dropped
	// tables; it must be set.
	Tiering Tiering
	// Database is the current database; USE and DROP DATABASE change it.
	Database string
	// View is the transaction's read view; nil outside one. Every lookup
	// and every planned scan reads at it.
	View *storage.ReadView
	// Writes buffers the transaction's writes; nil outside one and in a
	// read-only one (View set).
	Writes *storage.WriteBuffer
	// MemoryLimit bounds what the operators and the rows a statement
	// holds may use (memory.limit); <= 0: unlimited.
	MemoryLimit int64
	// MaxRecordsPerSplit cuts log-only ranges longer than this (a query's
	// hint wins); 0: never.
	MaxRecordsPerSplit int64
	// Threads bounds the split readers of one scan.
	Threads int
	// Logger hears what a statement accepts but ignores (CREATE TABLE's
	// notes) and what a read warns of (an incremental window older than
	// the table's log TTL); nil: nobody.
	Logger *slog.Logger
	// Vars are the connection's session variables (SET, @@name, SHOW
	// VARIABLES); the connection owns them and SET changes them in
	// place. nil: the defaults, and SET is refused.
	Vars *Variables
	// Location is the session's time zone (the connection's loc, which
	// SET time_zone changes; nil: UTC): a DEFAULT CURRENT_TIMESTAMP of a
	// TIMESTAMP column takes its wall clock there.
	Location *time.Location
	// Exec are the options of the operators above the read: NewSession
	// sets them from MemoryLimit, with the session as their subquery
	// runner.
	Exec exec.Options
	// Kept keeps the bindings of the connection's statements that are
	// worth binding once (kept.go); nil: none are kept.
	Kept *Kept
}

// Tiering is the tiering service a session calls.
type Tiering interface {
	Tier(ctx context.Context, path metadata.TablePath) (int64, error)
	RemoveDroppedLakes(ctx context.Context) error
}

// NewSession returns a session with s's settings whose operators run
// their subqueries through it.
func NewSession(s Session) *Session {
	sess := &s
	sess.Exec = exec.Options{MemoryLimit: s.MemoryLimit, Subqueries: subqueryRunner{s: sess}}
	return sess
}

var _ Reader = (*Session)(nil)

// catalog is the catalog the session's statements bind against.
func (s *Session) catalog() sessionCatalog {
	return sessionCatalog{eng: s.Engine, view: s.View, vars: s.variables()}
}

// variables are the session's variables, the defaults when it has none.
func (s *Session) variables() *Variables {
	if s.Vars == nil {
		return NewVariables(nil)
	}
	return s.Vars
}

// scanPlan is a bound, planned SELECT: everything needed to read it. It
// is either a point lookup (lookup non-nil) or a scan of splits.
type scanPlan struct {
	sel *sqlplan.SelectPlan
	// lookup is the key row of a point lookup; residual are the WHERE
	// conjuncts the key does not answer.
	lookup   []any
	residual []sqlplan.Expr
	// index, when set, is a lookup through a secondary index: the keys
	// of its leading columns to read; residual is then the whole WHERE.
	index   *indexRead
	spec    planner.ScanSpec
	pd      pushdown.Result
	planner planner.SplitPlanner
	splits  []planner.Split
	// pins keep the planned KV snapshots until the read is done.
	pins []func()
	// delta are the transaction's buffered writes to the table, laid
	// over the view by the read; nil when there are none.
	delta *txDelta
}

// projection lists the table columns the scan reads, in order: the
// query's, and for an overlay of a primary-key table the key columns it
// matches the view's rows by.
func (p *scanPlan) projection() []int {
	cols := p.sel.Columns
	if p.delta == nil || p.delta.keyer == nil {
		return cols
	}
	for _, c := range p.sel.Table.PrimaryKeyIndexes() {
		if !slices.Contains(cols, c) {
			cols = append(slices.Clip(cols), c)
		}
	}
	return cols
}

// Open builds the operators of any bound SELECT: over a FROM tree, one
// without FROM, one on information_schema, a point lookup or a scan.
func (s *Session) Open(ctx context.Context, sp *sqlplan.SelectPlan) (exec.Operator, error) {
	return s.OpenSelect(ctx, sp, nil)
}

// OpenSelect is Open; onLookup, when not nil, runs when the plan is a
// point lookup or a read through a secondary index.
func (s *Session) OpenSelect(ctx context.Context, sp *sqlplan.SelectPlan, onLookup func()) (exec.Operator, error) {
	switch {
	case sp.Source != nil:
		return Open(ctx, s, sp, s.Exec)
	case !sp.From:
		return s.openNoFrom(sp)
	case IsInfoSchema(sp):
		return s.openInfoSchema(ctx, sp)
	}
	p, err := s.planScan(ctx, sp)
	if err != nil {
		return nil, err
	}
	p.close()
	if (p.lookup != nil || p.index != nil) && onLookup != nil {
		onLookup()
	}
	return s.open(ctx, p, exec.QueryOf(sp))
}

// OpenExprs runs a bound SELECT of one table and yields the values of
// exprs (as columns c0, c1, ...) for every row it reads: the read half of
// UPDATE and DELETE.
func (s *Session) OpenExprs(ctx context.Context, sp *sqlplan.SelectPlan, exprs []sqlplan.Expr) (exec.Operator, error) {
	p, err := s.planScan(ctx, sp)
	if err != nil {
		return nil, err
	}
	p.close()
	q := exec.Query{Output: exprs, Limit: sp.Limit, Offset: sp.Offset}
	for i := range exprs {
		q.Names = append(q.Names, fmt.Sprintf("c%d", i))
	}
	return s.open(ctx, p, q)
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
func (s *Session) planScan(ctx context.Context, sp *sqlplan.SelectPlan) (*scanPlan, error) {
	if !sp.From || sp.Source != nil {
		return nil, fmt.Errorf("planScan of a query that is not a read of one table: %w", metadata.ErrUnsupported)
	}
	if IsInfoSchema(sp) {
		return nil, fmt.Errorf("%s is answered from the catalog, not planned as a scan: %w", sp.Table.Path, metadata.ErrUnsupported)
	}
	// An incremental read is a read of the log in its window, never of
	// the live KV state a lookup reads (plannedOnly).
	if sp.Virtual == "" && sp.Table.HasPrimaryKey() && !plannedOnly(sp) {
		if key, residual, ok := sqlplan.PointLookup(sp); ok {
			delta, err := s.delta(sp)
			if err != nil {
				return nil, err
			}
			return &scanPlan{sel: sp, lookup: key, residual: residual, delta: delta}, nil
		}
		// A transaction that wrote the table reads it as its scans do.
		if !s.inTx() || s.Writes == nil || !s.Writes.Wrote(sp.Table.Path) {
			if keys, ok := sqlplan.PrefixLookup(sp); ok {
				return &scanPlan{sel: sp, index: &indexRead{keys: keys, prefix: true}, residual: sqlplan.Conjuncts(sp.Where)}, nil
			}
			if ix, keys, ok := sqlplan.IndexLookup(sp); ok {
				return &scanPlan{sel: sp, index: &indexRead{def: ix, keys: keys}, residual: sqlplan.Conjuncts(sp.Where)}, nil
			}
		}
	}
	return s.planSplits(ctx, sp)
}

// bucketFilter is the buckets a batch read of sp's table needs, nil for
// all (sqlplan.BucketFilter).
func bucketFilter(sp *sqlplan.SelectPlan) []int32 {
	if b, ok := sqlplan.BucketFilter(sp); ok {
		return b
	}
	return nil
}

// indexRead is a read through a secondary index: the rows whose leading
// index columns hold one of keys.
type indexRead struct {
	def  metadata.DeclaredIndex
	keys [][]any
	rows int // the rows read, once read
	// prefix marks a prefix lookup (Fluss's lookupBy) instead: keys are
	// then key rows of the table's width with its partition and bucket
	// keys set, read from their bucket's key range (def is unset).
	prefix bool
}

// readIndex reads the rows of an index or prefix lookup, in the view in a
// transaction.
func (s *Session) readIndex(ctx context.Context, table *metadata.TableInfo, ix *indexRead) ([][]any, error) {
	if ix.prefix {
		if v := s.View; v != nil {
			return v.PrefixLookup(ctx, table.Path, ix.keys)
		}
		return s.Engine.PrefixLookup(ctx, table.Path, ix.keys)
	}
	if v := s.View; v != nil {
		return v.IndexLookup(ctx, table.Path, ix.def.Name, ix.keys)
	}
	return s.Engine.IndexLookup(ctx, table.Path, ix.def.Name, ix.keys)
}

// prefixColumns names the columns a prefix lookup of table pins: its
// partition keys, then its bucket key.
func prefixColumns(table *metadata.TableInfo) []string {
	var out []string
	for _, c := range append(table.PartitionKeyIndexes(), table.BucketKeyIndexes()...) {
		out = append(out, table.Schema.Columns[c].Name)
	}
	return out
}

// explainIndex describes an index (or prefix) lookup, as explainLookup a
// point one.
func explainIndex(p *scanPlan) []string {
	lines := []string{
		fmt.Sprintf("IndexLookup: [%s] index=%s keys=%d", p.sel.Table.Path, p.index.def.Name, len(p.index.keys)),
		"Branch: index-lookup",
	}
	if p.index.prefix {
		lines = []string{
			fmt.Sprintf("PrefixLookup: [%s] [Key: %s] keys=%d", p.sel.Table.Path, strings.Join(prefixColumns(&p.sel.Table), ", "), len(p.index.keys)),
			"Branch: prefix-lookup",
		}
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

// planSplits plans a bound SELECT as a scan of splits by the planner of
// the table's kind; a point lookup whose partition is only in the lake
// comes here too.
func (s *Session) planSplits(ctx context.Context, sp *sqlplan.SelectPlan) (*scanPlan, error) {
	base := &sp.Table
	if sp.Virtual != "" {
		base = &sp.Base
	}
	window, isIncremental, err := planner.IncrementalRange(sp.Hints, s.Location)
	if err != nil {
		return nil, err
	}
	if isIncremental && sp.Virtual != "" {
		return nil, fmt.Errorf("%w: '%s' reads a table's changes, not %s", metadata.ErrUnsupported, planner.OptIncrementalStart, sp.Table.Path)
	}
	var delta *txDelta
	// The transaction's buffered writes are not changes committed in any
	// window: an incremental read leaves them out.
	if !isIncremental {
		if delta, err = s.delta(sp); err != nil {
			return nil, err
		}
	}
	var lakeOpts []planner.Option
	if v := s.View; v != nil {
		// In a transaction every scan plans at its read view.
		lakeOpts = append(lakeOpts, planner.WithReadView(v))
	}
	var lakeFilter pushdown.LakeFilter
	if base.Config.DatalakeEnabled && !isIncremental {
		src := s.Lake.Source(base)
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
	if sp.Limit >= 0 && keepsEveryRow(sp, pd.PostFilter) && !hidesRows(delta) {
		spec.Limit = sp.Limit + sp.Offset
	}
	var p planner.SplitPlanner
	if sp.Virtual == sqlplan.VirtualLake {
		lakeOpts = append(lakeOpts, planner.WithLakeOnly())
	}
	switch {
	case isIncremental:
		if window.PredatesRetention(time.Now(), base.Config.LogTTL) && s.Logger != nil {
			s.Logger.Warn(fmt.Sprintf("Incremental read of %s starts at %d, which is earlier than the table is guaranteed to retain "+
				"(table.log.ttl = %s). Records that already expired cannot be returned, so the result may be a subset of "+
				"the requested window. Increase table.log.ttl or move the window forward.", base.Path, window.Start, base.Config.LogTTL),
				"table", base.Path.String(), "start", window.Start, "ttl", base.Config.LogTTL.String())
		}
		var opts []planner.Option
		if v := s.View; v != nil {
			opts = append(opts, planner.WithReadView(v))
		}
		p, err = planner.NewIncrementalPlanner(ctx, s.Engine, *base, spec, window, opts...)
	case sp.Virtual == sqlplan.VirtualChangelog || sp.Virtual == sqlplan.VirtualBinlog:
		opts := []planner.Option{planner.WithLocation(s.Location)}
		if v := s.View; v != nil {
			opts = append(opts, planner.WithReadView(v))
		}
		if sp.Virtual == sqlplan.VirtualBinlog {
			if _, ok := sp.Hints[planner.OptMaxRecordsPerSplit]; ok {
				return nil, fmt.Errorf("%w: '%s' on %s: a binlog read reads each bucket as one split, so that no update's two images are cut apart",
					metadata.ErrUnsupported, planner.OptMaxRecordsPerSplit, sp.Table.Path)
			}
			opts = append(opts, planner.WithWholeBucketSplits())
		}
		p, err = planner.NewChangelogPlanner(ctx, s.Engine, sp.Base, spec, opts...)
	case base.HasPrimaryKey():
		spec.Buckets = bucketFilter(sp)
		p, err = planner.NewUpsertPlanner(ctx, s.Engine, *base, spec, lakeOpts...)
	default:
		spec.Buckets = bucketFilter(sp)
		p, err = planner.NewAppendPlanner(ctx, s.Engine, *base, spec, lakeOpts...)
	}
	if err != nil {
		return nil, err
	}
	plan := &scanPlan{sel: sp, spec: spec, pd: pd, planner: p, delta: delta}
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
func (s *Session) pinSnapshots(p *scanPlan) error {
	for _, sp := range p.splits {
		kv, ok := sp.(*planner.KvLogSplit)
		if !ok || !kv.HasSnapshot() {
			continue
		}
		release, err := s.Engine.PinKvSnapshot(kv.TableBucket, kv.SnapshotID)
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
	if u.plan.index != nil {
		return int64(u.plan.index.rows)
	}
	n := planner.EstimateRows(u.plan.splits)
	if d := u.plan.delta; d != nil {
		n += int64(d.Len())
	}
	return n
}

func (u *unpinOnClose) Close() error {
	err := u.Operator.Close()
	u.plan.unpin()
	return err
}

// plannedOnly reports whether a bound SELECT's hints are the planners'
// to honour or refuse, so that no lookup of the live state may answer it
// in their place: a time-range incremental read (its window, or an end
// without a start, is checked when it is planned), or scan.startup.*,
// which only t$changelog takes.
func plannedOnly(sp *sqlplan.SelectPlan) bool {
	for _, k := range []string{planner.OptIncrementalStart, planner.OptIncrementalEnd, planner.OptScanStartupMode, planner.OptScanStartupTimestamp} {
		if _, ok := sp.Hints[k]; ok {
			return true
		}
	}
	return false
}

// scanOptions merges the DSN's scan options with the query's hints; a
// hint wins.
func (s *Session) scanOptions(hints map[string]string) map[string]string {
	opts := map[string]string{}
	if n := s.MaxRecordsPerSplit; n > 0 {
		opts[planner.OptMaxRecordsPerSplit] = fmt.Sprint(n)
	}
	for k, v := range hints {
		opts[k] = v
	}
	return opts
}

// Explain prints the plan of a query of one table, or of none.
func (s *Session) Explain(ctx context.Context, sp *sqlplan.SelectPlan) ([]string, error) {
	if !sp.From {
		return []string{"Values: 1 row (no FROM)"}, nil
	}
	if sp.Virtual == sqlplan.VirtualLakeSnapshots {
		return []string{fmt.Sprintf("LakeSnapshots: [%s]", sp.Base.Path)}, nil
	}
	if IsInfoSchema(sp) {
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
	if p.index != nil {
		return explainIndex(p), nil
	}
	post := make([]string, len(p.pd.PostFilter))
	for i, e := range p.pd.PostFilter {
		post[i] = e.String()
	}
	return explainOverlay(p, planner.Explain(p.sel.Table, p.spec, p.planner, p.splits, post)), nil
}

// explainOverlay adds, after the first line of a table's plan, the line
// that says the read lays the transaction's buffered writes over it.
func explainOverlay(p *scanPlan, lines []string) []string {
	if p.delta == nil || len(lines) == 0 {
		return lines
	}
	return slices.Insert(lines, 1, p.delta.explain())
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
	lines := explainOverlay(p, []string{
		fmt.Sprintf("FlussLookup: [%s], Type: [Upsert] [Key: %s]", t.Path, strings.Join(key, ", ")),
		"Branch: point-lookup",
	})
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
func (s *Session) open(ctx context.Context, p *scanPlan, q exec.Query) (exec.Operator, error) {
	sp := p.sel
	table := &sp.Table
	var (
		op     exec.Operator
		layout exec.Layout
	)
	if p.index != nil {
		rows, err := s.readIndex(ctx, table, p.index)
		if errors.Is(err, storage.ErrLookupInLake) || errors.Is(err, metadata.ErrNotFound) || errors.Is(err, metadata.ErrUnsupported) {
			// The lake holds rows of dropped partitions, or the index
			// was dropped (the table made again) since the plan: a scan
			// answers.
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
		all := make([]int, len(table.Schema.Columns))
		for i := range all {
			all[i] = i
		}
		p.index.rows = len(rows)
		rec, err := BuildRecord(table.Schema.Columns, rows)
		if err != nil {
			p.unpin()
			return nil, err
		}
		op = NewStatic(rec)
		layout = exec.NewLayout(len(all), all)
		q.Filter = p.residual
	} else if p.lookup != nil {
		row, found, err := s.lookupKey(ctx, table, p.delta, p.lookup)
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
			// A table bound in the shape of a transaction's cut has a
			// prefix of the columns the row holds (ReadView.Shape).
			rows = [][]any{row[:min(len(row), len(table.Schema.Columns))]}
		}
		all := make([]int, len(table.Schema.Columns))
		for i := range all {
			all[i] = i
		}
		rec, err := BuildRecord(table.Schema.Columns, rows)
		if err != nil {
			p.unpin()
			return nil, err
		}
		op = NewStatic(rec)
		layout = exec.NewLayout(len(all), all)
		q.Filter = p.residual
	} else {
		var err error
		if op, err = s.openScan(p); err != nil {
			p.unpin()
			return nil, err
		}
		layout = exec.NewLayout(len(table.Schema.Columns), p.projection())
		q.Filter = p.pd.PostFilter
	}
	out, err := exec.Build(op, q, layout, s.Exec)
	if err != nil {
		op.Close()
		p.unpin()
		return nil, err
	}
	return &unpinOnClose{Operator: out, plan: p}, nil
}

// openScan builds the operator that reads a planned scan: its split scan,
// under the overlay of the transaction's buffered writes when it wrote the
// table. Its records hold p.projection().
func (s *Session) openScan(p *scanPlan) (exec.Operator, error) {
	op, _, err := s.openScanStats(p)
	return op, err
}

// openScanStats is openScan returning the split scan too, for its
// statistics.
func (s *Session) openScanStats(p *scanPlan) (exec.Operator, *lakeunion.Scan, error) {
	scan := s.newScan(p)
	op := exec.Scan(scan)
	if p.delta == nil {
		return op, scan, nil
	}
	o, err := newTxOverlay(op, p, p.projection())
	if err != nil {
		op.Close()
		return nil, nil, err
	}
	return o, scan, nil
}

// hidesRows reports whether an overlay may drop rows of the scan under
// it, which then must not stop at the query's limit: a key table's
// buffered keys hide the view's rows. A log table's buffered rows come
// after the view's, so a scan stopping at the limit still yields the
// first rows.
func hidesRows(d *txDelta) bool { return d != nil && d.keyer != nil }

// newScan builds the split scan of a planned SELECT: its projection,
// pushed predicate, workers and, when nothing above the scan drops or
// reorders rows, its limit.
func (s *Session) newScan(p *scanPlan) *lakeunion.Scan {
	sp := p.sel
	opts := lakeunion.Options{
		Projection: p.projection(),
		Filter:     p.pd.Pushed,
		Threads:    s.Threads,
		Limit:      -1,
	}
	if sp.Limit >= 0 && keepsEveryRow(sp, p.pd.PostFilter) && !hidesRows(p.delta) {
		opts.Limit = sp.Limit + sp.Offset
	}
	read := &sp.Table
	switch sp.Virtual {
	case sqlplan.VirtualChangelog:
		// The changelog scan reads the base table and prepends the
		// system columns; the projection is in the virtual schema.
		opts.Changelog = true
		read = &sp.Base
	case sqlplan.VirtualBinlog:
		opts.Changelog, opts.Binlog = true, true
		read = &sp.Base
	case sqlplan.VirtualLake:
		read = &sp.Base
	}
	return lakeunion.NewSourceScan(lakeunion.EngineSource(s.Engine, s.Lake), read, p.splits, opts)
}

// Analyze answers EXPLAIN ANALYZE of a bound SELECT: it plans it, reads
// it to its end as the query would, and prints the plan with, under each
// split, what reading it took:
//
//	Split: log partition=- bucket=0 log=0..5000
//	  read: batches=3 skipped=47 row_groups=0/0 rows=300
//	Read: splits=1/1 batches=3 skipped=47 row_groups=0/0 rows=300 result_rows=12
//
// batches counts the record batches decoded (log batches, KV snapshot
// chunks) and skipped those the pushed predicate's statistics ruled out
// without reading their rows; row_groups are the lake's Parquet row groups
// decoded over those considered; rows are the rows the split yielded to
// the scan. The last line sums the splits (splits opened of planned) and
// counts the rows left after the post-scan filter, offset and limit.
//
// The query runs as SELECT runs it (the same scan options and operators
// above the scan), but its result rows are counted, not returned. A query
// over a FROM tree prints its tree (AnalyzeTree).
func (s *Session) Analyze(ctx context.Context, sp *sqlplan.SelectPlan) ([]string, error) {
	if sp.Source != nil {
		return s.AnalyzeTree(ctx, sp)
	}
	p, err := s.planScan(ctx, sp)
	if err != nil {
		return nil, err
	}
	defer p.close()
	defer p.unpin()
	if p.lookup != nil {
		// A point lookup reads one key from the live KV state: no split,
		// nothing to count.
		return append(explainLookup(p), "Read: point lookup"), nil
	}
	if p.index != nil {
		if p.index.prefix {
			return append(explainIndex(p), "Read: prefix lookup"), nil
		}
		return append(explainIndex(p), "Read: index lookup"), nil
	}
	post := make([]string, len(p.pd.PostFilter))
	for i, e := range p.pd.PostFilter {
		post[i] = e.String()
	}
	lines := explainOverlay(p, planner.Explain(p.sel.Table, p.spec, p.planner, p.splits, post))
	scan, out, err := s.analyzeScan(ctx, p)
	if err != nil {
		return nil, err
	}
	return analyzeLines(lines, scan.Stats(), out), nil
}

// analyzeTree runs a query over a FROM tree to its end and prints its
// plan tree with the rows each node yielded and the time spent in it

// AnalyzeTree runs a query over a FROM tree to its end and prints its
// plan tree with the rows each node yielded and the time spent in it
// (its inputs included). Each table's lines are its plan as EXPLAIN
// prints it.
func (s *Session) AnalyzeTree(ctx context.Context, sp *sqlplan.SelectPlan) ([]string, error) {
	op, a, err := OpenAnalyzed(ctx, s, sp, s.Exec)
	if err != nil {
		return nil, err
	}
	_, err = exec.Drain(ctx, op)
	if cerr := op.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	a.Ran()
	return s.ExplainTree(ctx, sp, a.Note)
}

// ExplainTree prints a query over a FROM tree as a tree, each table's
// read as EXPLAIN prints a query of that table; note adds figures.
func (s *Session) ExplainTree(ctx context.Context, sp *sqlplan.SelectPlan, note func(node any) string) ([]string, error) {
	var lerr error
	lines := sqlplan.FormatTreeNotes(sp, func(leaf *sqlplan.SelectPlan) []string {
		ls, err := s.Explain(ctx, leaf)
		if err != nil && lerr == nil {
			lerr = err
		}
		return ls
	}, note)
	return lines, lerr
}

// ExplainCompound prints a set operation as a tree, each SELECT as
// EXPLAIN prints it alone; note (nil for none) adds figures.
func (s *Session) ExplainCompound(ctx context.Context, cp *sqlplan.CompoundPlan, note func(node any) string) ([]string, error) {
	var lerr error
	lines := sqlplan.FormatCompoundNotes(cp, func(sp *sqlplan.SelectPlan) []string {
		ls, err := s.ExplainTree(ctx, sp, note)
		if err != nil && lerr == nil {
			lerr = err
		}
		return ls
	}, note)
	return lines, lerr
}

// AnalyzeCompound runs a set operation to its end and prints its tree as
// ExplainCompound does, with the rows each set operation, each SELECT and
// each node of their FROM trees yielded and the time spent in it (its
// inputs included), then the number of result rows.
func (s *Session) AnalyzeCompound(ctx context.Context, cp *sqlplan.CompoundPlan) ([]string, error) {
	op, a, err := OpenCompoundAnalyzed(ctx, s, cp, s.Exec)
	if err != nil {
		return nil, err
	}
	n, err := exec.Drain(ctx, op)
	if cerr := op.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	a.Ran()
	lines, err := s.ExplainCompound(ctx, cp, a.Note)
	if err != nil {
		return nil, err
	}
	return append(lines, fmt.Sprintf("Read: result_rows=%d", n)), nil
}

// analyzeScan runs a planned scan to its end, built as the query's own
// operator chain is (Session.open): the same scan options, then exec.Build's
// post-scan filter, aggregation, ordering, offset and limit. It returns
// the scan, for its statistics, and the number of result rows.
func (s *Session) analyzeScan(ctx context.Context, p *scanPlan) (*lakeunion.Scan, int64, error) {
	sp := p.sel
	table := &sp.Table
	in, scan, err := s.openScanStats(p)
	if err != nil {
		return nil, 0, err
	}
	q := exec.QueryOf(sp)
	q.Filter = p.pd.PostFilter
	op, err := exec.Build(in, q, exec.NewLayout(len(table.Schema.Columns), p.projection()), s.Exec)
	if err != nil {
		in.Close()
		return nil, 0, err
	}
	var rows int64
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			op.Close()
			return nil, 0, err
		}
		rows += int64(b.NumRows())
	}
	if err := op.Close(); err != nil {
		return nil, 0, err
	}
	return scan, rows, nil
}

// analyzeLines puts a read line under each split line of an EXPLAIN (the
// splits are printed in the order the scan read them) and a total at the
// end.
func analyzeLines(plan []string, stats []lakeunion.SplitStats, resultRows int64) []string {
	out := make([]string, 0, len(plan)+len(stats)+1)
	var total lakeunion.SplitStats
	opened, next := 0, 0
	for _, l := range plan {
		out = append(out, l)
		if !strings.HasPrefix(l, "Split: ") || next >= len(stats) {
			continue
		}
		st := stats[next]
		next++
		if !st.Opened {
			out = append(out, "  read: not opened")
			continue
		}
		opened++
		total.Batches += st.Batches
		total.BatchesSkipped += st.BatchesSkipped
		total.RowGroups += st.RowGroups
		total.RowGroupsSkipped += st.RowGroupsSkipped
		total.Rows += st.Rows
		out = append(out, "  read: "+readCounts(st))
	}
	return append(out, fmt.Sprintf("Read: splits=%d/%d %s result_rows=%d", opened, len(stats), readCounts(total), resultRows))
}

func readCounts(st lakeunion.SplitStats) string {
	return fmt.Sprintf("batches=%d skipped=%d row_groups=%d/%d rows=%d",
		st.Batches, st.BatchesSkipped, st.RowGroups, st.RowGroups+st.RowGroupsSkipped, st.Rows)
}

// Lookup reads the rows of sp's primary-key table whose key columns cols
// hold one of keys, from the live KV state or the transaction's read
// view, and runs sp's WHERE and outputs over them as a read of the table
// would: the held side of a lookup join. A key in a partition that only
// the lake still holds makes it read the table through its planner
// instead, which the join's keys then filter.
func (s *Session) Lookup(ctx context.Context, sp *sqlplan.SelectPlan, cols []int, keys [][]any) (exec.Operator, error) {
	table := &sp.Table
	// One prepared lookup for every key, decoding only the columns the
	// query reads.
	prepared, err := storage.NewKeyLookup(table, sp.Columns)
	if err != nil {
		return nil, err
	}
	lookup := s.Engine.LookupKeys
	if v := s.View; v != nil {
		lookup = v.LookupKeys
	}
	// The key rows share one backing array: only their key columns are
	// set.
	width := len(table.Schema.Columns)
	cells := make([]any, 0, len(keys)*width)
	keyRows := make([][]any, 0, len(keys))
tuples:
	for _, tuple := range keys {
		key := cells[len(cells) : len(cells)+width : len(cells)+width]
		for k, c := range cols {
			v, ok := exec.KeyValue(table.Schema.Columns[c].Type, tuple[k])
			if !ok {
				continue tuples
			}
			key[c] = v
		}
		cells = cells[:len(cells)+width]
		keyRows = append(keyRows, key)
	}
	delta, err := s.delta(sp)
	if err != nil {
		return nil, err
	}
	var buffered [][]any
	if delta != nil {
		// The transaction's buffered writes answer the keys they touched.
		if buffered, keyRows, err = delta.overlayKeyRows(keyRows); err != nil {
			return nil, err
		}
	}
	var recs []arrow.RecordBatch
	if len(keyRows) > 0 {
		recs, err = lookup(ctx, prepared, keyRows)
	}
	if errors.Is(err, storage.ErrLookupInLake) || errors.Is(err, storage.ErrTableChanged) {
		// The lake holds the partition, or the table changed since the
		// query was planned: a read of the table answers.
		return s.Open(ctx, sp)
	}
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || len(buffered) > 0 {
		rec, err := BuildRecord(table.Schema.Columns, buffered)
		if err != nil {
			for _, r := range recs {
				r.Release()
			}
			return nil, err
		}
		recs = append(recs, rec)
	}
	all := make([]int, len(table.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	q := exec.QueryOf(sp)
	q.Filter = sqlplan.Conjuncts(sp.Where)
	static := &staticOp{recs: recs}
	op, err := exec.Build(static, q, exec.NewLayout(len(all), all), s.Exec)
	if err != nil {
		static.Close()
		return nil, err
	}
	return op, nil
}

// openNoFrom builds the operators of a SELECT without FROM (SELECT 1,
// SELECT VERSION()): the query above a single row that has no columns.
func (s *Session) openNoFrom(sp *sqlplan.SelectPlan) (exec.Operator, error) {
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	q := exec.QueryOf(sp)
	q.Filter = sqlplan.Conjuncts(sp.Where)
	op, err := exec.Build(NewStatic(one), q, nil, s.Exec)
	if err != nil {
		one.Release()
		return nil, err
	}
	return op, nil
}

// BuildRecord builds one record batch of rows, in canonical form, with
// cols' names, types and nullability; with no columns, a batch of
// len(rows) rows.
func BuildRecord(cols []metadata.Column, rows [][]any) (arrow.RecordBatch, error) {
	mcols := make([]metadata.Column, len(cols))
	for i, c := range cols {
		mcols[i] = metadata.Column{Name: c.Name, Type: c.Type, NotNull: c.NotNull}
	}
	schema := metadata.ArrowSchema(mcols)
	if len(cols) == 0 {
		// No column to count them by: the batch says how many rows.
		return array.NewRecordBatch(schema, nil, int64(len(rows))), nil
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, row := range rows {
		for i, v := range row {
			if err := metadata.AppendValue(b.Field(i), cols[i].Type, v); err != nil {
				return nil, err
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// NewStatic is an operator that yields rec, a record built in memory,
// and releases it when closed.
func NewStatic(rec arrow.RecordBatch) exec.Operator {
	if rec == nil {
		return &staticOp{}
	}
	return &staticOp{recs: []arrow.RecordBatch{rec}}
}

// staticOp yields prepared record batches, and releases them when
// closed.
type staticOp struct {
	recs []arrow.RecordBatch
	next int
}

func (o *staticOp) Next(context.Context) (exec.Batch, error) {
	if o.next >= len(o.recs) {
		return exec.Batch{}, io.EOF
	}
	o.next++
	return exec.Batch{Rec: o.recs[o.next-1]}, nil
}

func (o *staticOp) Close() error {
	for _, rec := range o.recs {
		rec.Release()
	}
	o.recs, o.next = nil, 0
	return nil
}
