package tiering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// Options configure a Service.
type Options struct {
	// Enabled runs the background loop (the DSN's tiering=auto). Off, Start
	// does nothing, and Tier and Recover still work.
	Enabled bool
	// Logger receives round summaries and background errors; nil discards
	// them.
	Logger *slog.Logger
	// Now is the clock of the background loop and of DropExpired; nil is
	// time.Now.
	Now func() time.Time
	// CheckInterval is how often the background loop looks for tables
	// that are due (default DefaultCheckInterval).
	CheckInterval time.Duration
	// ExpireInterval is how often the background loop calls
	// storage.Engine.DropExpired (default DefaultExpireInterval).
	ExpireInterval time.Duration
	// Allocator backs the Arrow memory of rounds; nil is the default.
	Allocator memory.Allocator
}

// Defaults.
const (
	DefaultCheckInterval  = time.Second
	DefaultExpireInterval = time.Minute
)

// Service tiers lake-enabled tables into the lake. It is safe for
// concurrent use; at most one round runs per table at a time.
type Service struct {
	eng  *storage.Engine
	lk   *lake.Lake
	opts Options

	mu     sync.Mutex
	tables map[int64]*sync.Mutex // one per table id, held for a round

	// hooks are for tests only.
	hooks struct {
		// beforeRound runs at the start of every round, under the table's
		// lock.
		beforeRound func(*metadata.TableInfo)
		// skipPhase2 stops a round after the lake commit, as a crash
		// between the two phases would.
		skipPhase2 bool
		// beforeRecord runs between the lake commit and the engine's
		// record of it.
		beforeRecord func(*metadata.TableInfo)
	}

	startOnce sync.Once
	closeOnce sync.Once
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// New returns a service over an engine and its lake. Nothing runs until
// Start.
func New(eng *storage.Engine, lk *lake.Lake, opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = DefaultCheckInterval
	}
	if opts.ExpireInterval <= 0 {
		opts.ExpireInterval = DefaultExpireInterval
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	return &Service{eng: eng, lk: lk, opts: opts, tables: map[int64]*sync.Mutex{}}
}

// Start runs the background loop when Options.Enabled: each lake-enabled
// table is tiered every table.datalake.freshness, and expired log is
// dropped every ExpireInterval. A second Start, or one after Close, does
// nothing.
func (s *Service) Start() {
	s.startOnce.Do(func() {
		if !s.opts.Enabled {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.mu.Lock()
		s.cancel = cancel
		s.mu.Unlock()
		s.wg.Add(1)
		go s.run(ctx)
	})
}

// Close stops the background loop and waits for it, cancelling a round
// in progress (which then commits nothing). Idempotent.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		s.startOnce.Do(func() {}) // a Start after Close does nothing
		s.mu.Lock()
		cancel := s.cancel
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		s.wg.Wait()
	})
	return nil
}

// lockTable takes the round lock of a table.
func (s *Service) lockTable(tableID int64) func() {
	s.mu.Lock()
	m := s.tables[tableID]
	if m == nil {
		m = &sync.Mutex{}
		s.tables[tableID] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// Tier runs one tiering round of a table now (CALL sys.tier) and returns
// the id of the table's lake snapshot after it: a new one when the round
// found something to tier, else the current one (0 when the table has
// none). A round already running for the table is waited for.
func (s *Service) Tier(ctx context.Context, path metadata.TablePath) (int64, error) {
	info, err := s.eng.TableInfo(ctx, path)
	if err != nil {
		return 0, err
	}
	if !info.Config.DatalakeEnabled {
		return 0, fmt.Errorf("%w: table %s does not have %s: it has no lake to tier into", metadata.ErrUnsupported, path, metadata.OptDatalakeEnabled)
	}
	defer s.lockTable(info.TableID)()
	// The table may have been dropped (or altered) while we waited.
	if cur, err := s.eng.TableInfo(ctx, path); err != nil {
		return 0, err
	} else if cur.TableID != info.TableID {
		return 0, fmt.Errorf("table %s was dropped and re-created during the round: %w", path, metadata.ErrNotFound)
	} else {
		info = cur
	}
	id, err := s.round(ctx, &info)
	return id, s.droppedDuringRound(&info, err)
}

// Recover finishes the tiering commits an earlier process left half done:
// for each lake-enabled table whose lake has a manifest newer than the
// engine's record, the record is brought up to it (phase 2 redone); and
// it removes the lakes of dropped tables (RemoveDroppedLakes). Call it
// after opening the engine and the lake, before serving reads.
func (s *Service) Recover(ctx context.Context) error {
	tables, err := s.lakeTables(ctx)
	if err != nil {
		return err
	}
	// A lake left by a drop is garbage, not a reason to refuse the open.
	if err := s.RemoveDroppedLakes(ctx); err != nil {
		s.opts.Logger.Warn("removing the lakes of dropped tables failed", "err", err)
	}
	var errs []error
	for _, info := range tables {
		unlock := s.lockTable(info.TableID)
		_, err := s.reconcile(ctx, &info)
		unlock()
		if err != nil && !errors.Is(err, metadata.ErrNotFound) {
			errs = append(errs, fmt.Errorf("recover the lake snapshot of %s: %w", info.Path, err))
		}
	}
	return errors.Join(errs...)
}

// lakeTables lists the lake-enabled tables of every database.
func (s *Service) lakeTables(ctx context.Context) ([]metadata.TableInfo, error) {
	dbs, err := s.eng.ListDatabases(ctx)
	if err != nil {
		return nil, err
	}
	var out []metadata.TableInfo
	for _, db := range dbs {
		names, err := s.eng.ListTables(ctx, db)
		if errors.Is(err, metadata.ErrNotFound) {
			continue // dropped meanwhile
		}
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			info, err := s.eng.TableInfo(ctx, metadata.TablePath{Database: db, Table: name})
			if errors.Is(err, metadata.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if info.Config.DatalakeEnabled {
				out = append(out, info)
			}
		}
	}
	return out, nil
}

// reconcile makes the engine's record of the table's lake snapshot agree
// with the lake's latest manifest and returns that manifest (the zero
// Manifest when the lake has none). The caller holds the table's lock.
func (s *Service) reconcile(ctx context.Context, info *metadata.TableInfo) (lake.Manifest, error) {
	m, ok, err := s.lk.LatestManifest(ctx, info.TableID)
	if err != nil {
		return lake.Manifest{}, err
	}
	rec, has, err := s.eng.ReadableLakeSnapshot(ctx, info.Path)
	if err != nil {
		return lake.Manifest{}, err
	}
	switch {
	case !ok && !has:
		return lake.Manifest{}, nil
	case !ok || (has && rec.SnapshotID > m.SnapshotID):
		// The engine records a snapshot the lake does not have: the lake
		// lost committed manifests. Tiering on would write over them.
		return lake.Manifest{}, fmt.Errorf("%w: the engine records lake snapshot %d of %s, but the lake's latest is %d: lake manifest %s is missing", metadata.ErrCorrupt, rec.SnapshotID, info.Path, m.SnapshotID, lake.ManifestPath(info.TableID, rec.SnapshotID))
	case has && rec.SnapshotID == m.SnapshotID:
		return m, nil
	}
	// Phase 1 committed, phase 2 did not: record it now.
	if err := s.eng.CommitLakeSnapshot(ctx, info.Path, engineSnapshot(info.TableID, m)); err != nil {
		return lake.Manifest{}, err
	}
	s.opts.Logger.Info("recorded a lake snapshot committed before a crash", "table", info.Path.String(), "snapshot", m.SnapshotID)
	return m, nil
}

// engineSnapshot is the engine's record of a manifest.
func engineSnapshot(tableID int64, m lake.Manifest) metadata.LakeSnapshot {
	snap := metadata.LakeSnapshot{
		SnapshotID:     m.SnapshotID,
		TieredOffsets:  make(map[metadata.TableBucket]int64, len(m.TieredOffsets)),
		PartitionNames: map[int64]string{},
	}
	for _, t := range m.TieredOffsets {
		snap.TieredOffsets[metadata.TableBucket{TableID: tableID, PartitionID: t.PartitionID, Bucket: t.Bucket}] = t.Offset
		if t.PartitionName != "" {
			snap.PartitionNames[t.PartitionID] = t.PartitionName
		}
	}
	return snap
}

// run is the background loop.
func (s *Service) run(ctx context.Context) {
	defer s.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("the tiering loop panicked and stopped", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	tick := time.NewTicker(s.opts.CheckInterval)
	defer tick.Stop()
	last := map[int64]time.Time{} // per table id: when its cadence started
	lastExpire := s.opts.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.safely("background tiering", func() { s.tierDue(ctx, last) })
		if now := s.opts.Now(); now.Sub(lastExpire) >= s.opts.ExpireInterval {
			lastExpire = now
			s.safely("background log expiry", func() {
				if _, err := s.eng.DropExpired(ctx, now); err != nil && ctx.Err() == nil {
					s.opts.Logger.Error("dropping expired log failed", "err", err)
				}
			})
		}
	}
}

// safely runs f, turning a panic into a logged error.
func (s *Service) safely(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error(what+" panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	f()
}

// tierDue tiers every lake-enabled table whose freshness interval has
// passed since its cadence started: its latest lake snapshot's commit, or
// when the loop first saw it.
func (s *Service) tierDue(ctx context.Context, last map[int64]time.Time) {
	tables, err := s.lakeTables(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Error("listing tables to tier failed", "err", err)
		}
		return
	}
	live := map[int64]bool{}
	for _, info := range tables {
		live[info.TableID] = true
		now := s.opts.Now()
		start, seen := last[info.TableID]
		if !seen {
			start = now
			if m, ok, err := s.lk.LatestManifest(ctx, info.TableID); err == nil && ok {
				start = m.CommittedAt
			}
			last[info.TableID] = start
		}
		if now.Sub(start) < info.Config.Freshness {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		s.safely("tiering "+info.Path.String(), func() {
			id, err := s.Tier(ctx, info.Path)
			switch {
			case err != nil && ctx.Err() == nil && !errors.Is(err, metadata.ErrNotFound):
				s.opts.Logger.Error("tiering round failed", "table", info.Path.String(), "err", err)
			case err == nil:
				s.opts.Logger.Debug("tiering round done", "table", info.Path.String(), "snapshot", id)
			}
		})
		last[info.TableID] = s.opts.Now()
	}
	for id := range last {
		if !live[id] {
			delete(last, id)
		}
	}
}

// expire removes the table's lake snapshots beyond its
// table.datalake.snapshot.retention and the files only they list,
// keeping the readable one and those open read views pin (lake.Expire).
// A failure is logged: the snapshots stay for the next round.
func (s *Service) expire(ctx context.Context, info *metadata.TableInfo, readable int64) {
	keep := append(s.eng.PinnedLakeSnapshots(info.TableID), readable)
	res, err := s.lk.Expire(context.WithoutCancel(ctx), info.TableID, info.Config.LakeRetention, keep)
	if err != nil {
		s.opts.Logger.Error("lake snapshot expiry failed", "table", info.Path.String(), "err", err)
		return
	}
	if len(res.Snapshots) > 0 || res.Files > 0 {
		s.opts.Logger.Info("lake snapshots expired", "table", info.Path.String(), "snapshots", len(res.Snapshots), "files", res.Files, "bytes", res.Bytes)
	}
}
