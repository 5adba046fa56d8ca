package query

import (
	"context"
	"fmt"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/pushdown"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// StreamRequest says where a streaming read starts.
type StreamRequest struct {
	Mode StartupMode
	// Timestamp is the start of StartupTimestamp, in ms since the epoch.
	Timestamp int64
	// Offsets are the next offsets to read per bucket, for
	// StartupOffsets: those a stream of the same table handed out.
	Offsets map[metadata.TableBucket]int64
	// Bounded is where the read stops; the zero value never stops.
	Bounded planner.Bounded
}

// Stream is an open streaming read of one table (or t$changelog, or
// t$binlog): the
// records of its scan, in Layout, first of the state a `full` start
// reads, then of every change committed after the start offsets, waiting
// for commits. The rows are not yet filtered by Filter. It implements
// exec.Source; it is used by one goroutine at a time and must be closed,
// which releases the KV snapshots and the read view its state pins.
type Stream struct {
	*lakeunion.Stream
	// Plan is the bound SELECT the stream reads.
	Plan *sqlplan.SelectPlan
	// Layout places the table's (or t$changelog's) columns in the records.
	Layout exec.Layout
	// Filter are the conjuncts of the WHERE pushdown could not prove.
	Filter []sqlplan.Expr

	view *storage.ReadView
	pins []func()
}

var _ exec.Source = (*Stream)(nil)

func (s *Stream) unpin() {
	for _, release := range s.pins {
		release()
	}
	s.pins = nil
	if s.view != nil {
		s.view.Close()
		s.view = nil
	}
}

// Close ends the stream. Idempotent.
func (s *Stream) Close() error {
	s.unpin()
	return s.Stream.Close()
}

// OpenStream opens a streaming read of sp, a bound SELECT of one table,
// its t$changelog or its t$binlog, with no aggregate, DISTINCT or ORDER BY (a LIMIT is the
// caller's to apply). The start follows req.Mode:
//   - earliest and latest: each bucket's log start or high watermark now;
//   - offsets: req.Offsets;
//   - full: a primary-key table's state at one read view, through the
//     same planner as a batch read (KV snapshots, their tails, the lake
//     union), then its log from the view's high watermarks; a log table
//     likewise through its readable lake snapshot when it has one, else
//     from the earliest offsets; t$changelog from the earliest offsets.
//
// Buckets of partitions created after the start are read from their log
// start, whatever the mode, unless req.Bounded stops the read: it then
// reads each bucket up to the stop planned with the starts, and a
// partition created later not at all.
func (s *Session) OpenStream(ctx context.Context, sp *sqlplan.SelectPlan, req StreamRequest) (*Stream, error) {
	st, base, opts, err := s.planStream(ctx, sp, req)
	if err != nil {
		return nil, err
	}
	ls, err := lakeunion.OpenStream(ctx, s.Engine, lakeunion.EngineSource(s.Engine, s.Lake), &base, opts)
	if err != nil {
		st.unpin()
		return nil, err
	}
	st.Stream = ls
	return st, nil
}

// planStream plans OpenStream's read: the table it subscribes to (t for
// t$changelog) and the options of its lakeunion.Stream, the start
// offsets and a full start's state. The returned Stream holds what that
// state pins, and has no lakeunion.Stream yet.
func (s *Session) planStream(ctx context.Context, sp *sqlplan.SelectPlan, req StreamRequest) (*Stream, metadata.TableInfo, lakeunion.StreamOptions, error) {
	var opts lakeunion.StreamOptions
	if err := streamable(sp); err != nil {
		return nil, metadata.TableInfo{}, opts, err
	}
	if s.inTx() {
		return nil, metadata.TableInfo{}, opts, fmt.Errorf("%w: a streaming read inside a transaction (it would never end the transaction's view)", metadata.ErrUnsupported)
	}
	binlog := sp.Virtual == sqlplan.VirtualBinlog
	changelog := sp.Virtual == sqlplan.VirtualChangelog || binlog
	base := sp.Table
	if changelog {
		base = sp.Base
	}
	pd := pushdown.Split(&sp.Table, sp.Where)
	if err := ctx.Err(); err != nil {
		return nil, base, opts, err
	}
	partFilter := pd.PartitionFilter
	if changelog && !binlog {
		var err error
		if partFilter, err = planner.ChangelogBaseFilter(partFilter); err != nil {
			return nil, base, opts, fmt.Errorf("partition filter on %s$changelog: %w", base.Path, err)
		}
	}
	st := &Stream{Plan: sp, Layout: exec.NewLayout(len(sp.Table.Schema.Columns), sp.Columns), Filter: pd.PostFilter}
	opts = lakeunion.StreamOptions{
		Options:         lakeunion.Options{Projection: sp.Columns, Filter: pd.Pushed, Changelog: changelog, Binlog: binlog, Threads: 1},
		PartitionFilter: partFilter,
		// The view and the KV snapshots of a full start are let go once
		// its state is read.
		StateRead: st.unpin,
		Dropped: func(partitionID int64) bool {
			return s.Engine.DroppedPartition(sp.Table.TableID, partitionID)
		},
	}
	mode := req.Mode
	if mode == "" {
		mode = planner.StartupFull
	}
	if err := planner.CheckBounded(&base, sp.Virtual, mode, req.Bounded); err != nil {
		return nil, base, opts, err
	}
	if mode == planner.StartupFull && (changelog || !base.HasPrimaryKey() && !base.Config.DatalakeEnabled) {
		mode = planner.StartupEarliest
	}
	var err error
	switch mode {
	case planner.StartupEarliest, planner.StartupLatest, planner.StartupTimestamp:
		spec := planner.ScanSpec{Table: base.Path, PartitionFilter: partFilter, Limit: -1}
		opts.Start, err = planner.StreamStart(ctx, s.Engine, base, spec, planner.Startup{Mode: mode, Timestamp: req.Timestamp})
	case planner.StartupOffsets:
		opts.Start, err = resumeOffsets(&base, req.Offsets)
	case planner.StartupFull:
		err = s.planState(ctx, sp, st, &opts)
	default:
		err = fmt.Errorf("%w: startup mode %q of a subscription", metadata.ErrUnsupported, mode)
	}
	if err == nil && req.Bounded.IsBounded() {
		// After the starts: a start found at the high watermark is
		// never past its stop.
		spec := planner.ScanSpec{Table: base.Path, PartitionFilter: partFilter, Limit: -1}
		opts.Bounded = true
		opts.Stop, err = planner.StreamStop(ctx, s.Engine, base, spec, req.Bounded)
	}
	if err != nil {
		st.unpin()
		return nil, base, opts, err
	}
	return st, base, opts, nil
}

// streamable refuses what a streaming read cannot answer: anything but
// one table read row by row.
func streamable(sp *sqlplan.SelectPlan) error {
	why := ""
	q := exec.QueryOf(sp)
	switch {
	case !sp.From || sp.Source != nil || sp.Compound != nil:
		why = "reads one table: no join, derived table or set operation"
	case IsInfoSchema(sp):
		why = "reads a table, not information_schema"
	case sp.Virtual != "" && sp.Virtual != sqlplan.VirtualChangelog && sp.Virtual != sqlplan.VirtualBinlog:
		why = "reads a table, its $changelog or its $binlog"
	case q.Aggregated():
		why = "has no aggregate or GROUP BY"
	case sp.Distinct:
		why = "has no DISTINCT"
	case len(sp.OrderBy) > 0:
		why = "has no ORDER BY (each bucket's changes come in offset order)"
	}
	if why != "" {
		return fmt.Errorf("%w: a streaming read %s", metadata.ErrUnsupported, why)
	}
	return nil
}

// resumeOffsets checks that offsets handed out earlier are of table.
func resumeOffsets(table *metadata.TableInfo, offsets map[metadata.TableBucket]int64) (map[metadata.TableBucket]int64, error) {
	if offsets == nil {
		return nil, fmt.Errorf("%w: startup mode 'offsets' without offsets to resume from", metadata.ErrInvalidValue)
	}
	out := make(map[metadata.TableBucket]int64, len(offsets))
	for tb, off := range offsets {
		if tb.TableID != table.TableID {
			return nil, fmt.Errorf("%w: the offsets to resume from are of table id %d, and %s is table id %d (dropped and created again?)", metadata.ErrInvalidValue, tb.TableID, table.Path, table.TableID)
		}
		if tb.Bucket < 0 || int(tb.Bucket) >= table.NumBuckets || off < 0 {
			return nil, fmt.Errorf("%w: offset %d of %s does not fit %s (%d buckets)", metadata.ErrInvalidValue, off, tb, table.Path, table.NumBuckets)
		}
		out[tb] = off
	}
	return out, nil
}

// planState plans the state a `full` start reads at a read view, and the
// log offsets it reflects. A log table without a readable lake snapshot
// has no state to read: it starts from the earliest offsets.
func (s *Session) planState(ctx context.Context, sp *sqlplan.SelectPlan, st *Stream, opts *lakeunion.StreamOptions) error {
	view, err := s.Engine.ReadView(ctx)
	if err != nil {
		return err
	}
	st.view = view
	at := *s
	at.View, at.Writes = view, nil
	all := *sp
	all.Limit, all.Offset = -1, 0
	p, err := at.planSplits(ctx, &all)
	if err != nil {
		return err
	}
	p.close()
	st.pins = p.pins
	base := &sp.Table
	if !base.HasPrimaryKey() && !p.planner.HasLakeSnapshot() {
		st.unpin()
		spec := planner.ScanSpec{Table: base.Path, PartitionFilter: opts.PartitionFilter, Limit: -1}
		opts.Start, err = planner.StreamStart(ctx, s.Engine, *base, spec, planner.Startup{Mode: planner.StartupEarliest})
		return err
	}
	opts.Snapshot = p.splits
	parts := []int64{metadata.NonPartitioned}
	if base.IsPartitioned() {
		list, err := s.Engine.ListPartitions(ctx, base.Path)
		if err != nil {
			return err
		}
		parts = parts[:0]
		for _, pi := range list {
			parts = append(parts, pi.ID)
		}
	}
	opts.Start = map[metadata.TableBucket]int64{}
	for _, pid := range parts {
		for b := range base.NumBuckets {
			tb := metadata.TableBucket{TableID: base.TableID, PartitionID: pid, Bucket: int32(b)}
			_, opts.Start[tb] = view.LogOffsets(tb)
		}
	}
	return nil
}

// selectStream runs a SELECT whose hint asks for a streaming read: its
// Next waits for new rows until the query's context ends, or, bounded,
// until every bucket is read to its stop.
func (s *Session) selectStream(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg, start planner.Startup, bounded planner.Bounded) (*Result, error) {
	batch := *sel
	batch.Hints = planner.WithoutStreamOptions(sel.Hints)
	sp, err := s.bindSelect(ctx, &batch, args)
	if err != nil {
		return nil, err
	}
	st, err := s.OpenStream(ctx, sp, StreamRequest{Mode: start.Mode, Timestamp: start.Timestamp, Bounded: bounded})
	if err != nil {
		return nil, err
	}
	q := exec.QueryOf(sp)
	q.Filter = st.Filter
	op, err := exec.Build(exec.Scan(st), q, st.Layout, s.Exec)
	if err != nil {
		st.Close()
		return nil, err
	}
	return newResult(ResultColumns(sp), op), nil
}

// Subscription is a Stream with its WHERE applied, for callers that want
// each row's change type, bucket and offset with it: Next returns the
// batch with its visible rows and the StreamMeta of the record they are
// rows of. It is used by one goroutine at a time and must be closed.
type Subscription struct {
	st *Stream
	op exec.Operator
	// Columns are the columns the subscription reads, and Positions
	// their places in the records of Next.
	Columns   []Column
	Positions []int
}

// Subscribe opens a subscription of sel, a SELECT of columns (no
// expression) of one table, its t$changelog or its t$binlog, without
// OPTIONS hint.
func (s *Session) Subscribe(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg, req StreamRequest) (*Subscription, error) {
	if len(sel.Hints) > 0 {
		return nil, fmt.Errorf("%w: a subscription takes its options as arguments, not as an OPTIONS hint", metadata.ErrUnsupported)
	}
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	pos := make([]int, len(sp.Output))
	for i, o := range sp.Output {
		ref, ok := o.Expr.(*sqlplan.ColumnRef)
		if !ok {
			return nil, fmt.Errorf("%w: a subscription reads columns, and %s is an expression", metadata.ErrUnsupported, o.Expr)
		}
		pos[i] = ref.Index
	}
	if sp.Limit >= 0 || sp.Offset > 0 {
		return nil, fmt.Errorf("%w: a subscription has no LIMIT or OFFSET", metadata.ErrUnsupported)
	}
	st, err := s.OpenStream(ctx, sp, req)
	if err != nil {
		return nil, err
	}
	for i, c := range pos {
		pos[i] = st.Layout[c]
	}
	op, err := exec.Filter(exec.Scan(st), st.Filter, st.Layout)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &Subscription{st: st, op: op, Columns: ResultColumns(sp), Positions: pos}, nil
}

// Next returns the next batch with rows the WHERE keeps, waiting for one,
// and what its rows are. Valid until the following Next or Close.
func (s *Subscription) Next(ctx context.Context) (Batch, lakeunion.StreamMeta, error) {
	b, err := s.op.Next(ctx)
	if err != nil {
		return Batch{}, lakeunion.StreamMeta{}, err
	}
	return b, s.st.Meta(), nil
}

// Table is the table the subscription reads (t for t$changelog).
func (s *Subscription) Table() *metadata.TableInfo { return s.st.Table() }

// Offsets are the next log offsets per bucket: a subscription resumed at
// them reads exactly what this one has not returned. An error while the
// state of a `full` start is being read.
func (s *Subscription) Offsets() (map[metadata.TableBucket]int64, error) { return s.st.Offsets() }

// Partition names the partition of a bucket the subscription reads.
func (s *Subscription) Partition(tb metadata.TableBucket) (string, bool) { return s.st.Partition(tb) }

// Wakeups counts the commits that woke the subscription while it waited.
func (s *Subscription) Wakeups() int64 { return s.st.Wakeups() }

// Close ends the subscription. Idempotent.
func (s *Subscription) Close() error { return s.op.Close() }

// The words of streaming reads the driver speaks, from the packages
// under query.
type (
	// StartupMode is planner.StartupMode.
	StartupMode = planner.StartupMode
	// StreamMeta is lakeunion.StreamMeta.
	StreamMeta = lakeunion.StreamMeta
)

const (
	StartupFull     = planner.StartupFull
	StartupEarliest = planner.StartupEarliest
	StartupLatest   = planner.StartupLatest
	StartupOffsets  = planner.StartupOffsets
)

// Bounded is planner.Bounded, and its modes.
type (
	Bounded     = planner.Bounded
	BoundedMode = planner.BoundedMode
)

const (
	BoundedUnbounded    = planner.BoundedUnbounded
	BoundedLatestOffset = planner.BoundedLatestOffset
	BoundedTimestamp    = planner.BoundedTimestamp
)

// ErrSnapshotPhase is lakeunion.ErrSnapshotPhase.
var ErrSnapshotPhase = lakeunion.ErrSnapshotPhase
