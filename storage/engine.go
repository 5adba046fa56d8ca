package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
)

const (
	lockFileName = "LOCK"
	dataDirName  = "data"
	memRoot      = "memory"
)

// Engine is the embedded Fluss: the catalog, and a log tablet per bucket.
// It is safe for concurrent use. One Engine owns its directory (an OS lock
// keeps other engines out); Close releases it.
type Engine struct {
	opts Options
	fs   FS
	root string
	lock io.Closer

	// mu guards the catalog and closed. Statements (Append, ReadLog) hold
	// it shared for their whole run; DDL holds it exclusively, so a table
	// is never dropped under a write.
	mu struct {
		sync.RWMutex
		cat    *catalog
		closed bool
	}
	// tabletsMu guards tablets; taken after mu, never before.
	tabletsMu sync.Mutex
	tablets   map[metadata.TableBucket]*logTablet
	// tabIndex lists tablets for read views; rebuilt after tablets
	// changes (nil until then), under tabletsMu.
	tabIndex *tabletIndex
	// cutMu orders commits against read views: a commit holds it shared
	// while it publishes (its KV write, its conflict keys and its high
	// watermarks), after it has written and fsynced its batches with its
	// buckets locked, and a read view takes it exclusively for its cut,
	// so the cut falls between publications without locking every bucket
	// (a cost that grew with the database) and without waiting for a
	// commit's fsync. Taken after mu, uniqueMu and the buckets' locks;
	// before tabletsMu and kvMu.
	cutMu sync.RWMutex
	// group combines small durable commits (commit_group.go).
	group commitGroup

	// failed is set when a write failed in a way that leaves the log's
	// durability unknown (a failed fsync or roll back); writes are then
	// refused with ErrReadOnly.
	failed atomic.Pointer[error]
	// journal is the commit journal of commits that write more than one
	// batch (commit_journal.go).
	journal *commitJournal

	// kv is the Pebble store holding the live rows of every primary-key
	// bucket (see kv_store.go).
	kv *pebble.DB
	// kvMon records the faults Pebble reports (kv_monitor.go).
	kvMon *kvMonitor
	// kvMu guards kvBuckets. While holding it only a kvBucket's mu may be
	// taken.
	kvMu      sync.Mutex
	kvBuckets map[metadata.TableBucket]*kvBucket
	// bg runs the background KV snapshots.
	bg struct {
		stop chan struct{}
		once sync.Once
		wg   sync.WaitGroup
	}
	// views are the open read views, released at Close.
	views viewSet
	// kvPins counts the pins held on KV snapshots, by read views, snapshot
	// readers and PinKvSnapshot, for Pins.
	kvPins atomic.Int64
	// conflicts is the first-committer-wins bookkeeping of write views
	// (conflict.go).
	conflicts conflictSet
	// closedFlag mirrors mu.closed for code that must not take mu.
	closedFlag atomic.Bool
	// autoInc allocates auto-increment values (autoinc.go).
	autoInc autoIncrements
	// ckpt is the acknowledged-offsets checkpoint (checkpoint.go).
	ckpt checkpointState
	// watch wakes subscriptions on commits and partition changes
	// (watch.go).
	watch commitWatch
}

// Open opens (creating when needed) the engine of opts.Dir, or a fresh
// in-memory engine, and recovers every log tablet.
func Open(opts Options) (*Engine, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, fs: opts.FS, root: opts.Dir, tablets: map[metadata.TableBucket]*logTablet{}, kvBuckets: map[metadata.TableBucket]*kvBucket{}}
	if e.fs == nil {
		if opts.InMemory {
			e.fs = NewMemFS()
		} else {
			e.fs = DiskFS()
		}
	}
	if opts.InMemory {
		e.root = memRoot
	}
	e.opts.segmentFiles = newFileCache(e.fs, opts.MaxOpenSegments, opts.Sync)
	if err := e.fs.MkdirAll(e.root, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", e.root, err)
	}
	lock, err := e.fs.Lock(filepath.Join(e.root, lockFileName))
	if err != nil {
		if errors.Is(err, metadata.ErrLocked) {
			return nil, fmt.Errorf("open %s: %w", e.root, err)
		}
		return nil, fmt.Errorf("lock %s: %w", e.root, err)
	}
	e.lock = lock
	cat, err := e.openCatalog()
	if err != nil {
		lock.Close()
		return nil, err
	}
	e.mu.cat = cat
	_ = e.fs.Remove(filepath.Join(e.root, catalogTmpFile))
	if err := e.loadAcked(); err != nil {
		lock.Close()
		return nil, err
	}
	if err := e.recoverTablets(); err != nil {
		e.closeTablets()
		lock.Close()
		return nil, err
	}
	if err := e.recoverCommits(); err != nil {
		e.closeJournal()
		e.closeTablets()
		lock.Close()
		return nil, err
	}
	if err := e.checkAcked(); err != nil {
		e.closeJournal()
		e.closeTablets()
		lock.Close()
		return nil, err
	}
	err = e.recoverKv()
	if err == nil {
		err = e.checkKvLogs()
	}
	if err != nil {
		e.closeKv()
		e.closeJournal()
		e.closeTablets()
		lock.Close()
		return nil, err
	}
	e.bg.stop = make(chan struct{})
	if opts.Sync {
		e.ckpt.kick = make(chan struct{}, 1)
		e.ckpt.writtenC.L = &e.ckpt.writtenMu
		e.bg.wg.Add(1)
		go e.checkpointLoop(e.bg.stop)
	}
	e.autoPartitionAll(context.Background())
	if opts.KvSnapshotInterval > 0 {
		e.bg.wg.Add(1)
		go e.runEvery(opts.KvSnapshotInterval, e.bg.stop, func() { e.snapshotChanged(e.bg.stop) })
	}
	if opts.AutoPartitionInterval > 0 {
		e.bg.wg.Add(1)
		go e.runEvery(opts.AutoPartitionInterval, e.bg.stop, func() { e.autoPartitionAll(context.Background()) })
	}
	return e, nil
}

// recoverKv opens the KV store, drops the state of dropped tables, finds
// the KV snapshots and replays every primary-key bucket's log into the KV
// store from the offset it reflects.
func (e *Engine) recoverKv() error {
	if err := e.openKv(); err != nil {
		return err
	}
	if err := e.removeDroppedKv(); err != nil {
		return err
	}
	if err := e.recoverKvSnapshots(); err != nil {
		return err
	}
	return e.replayKv()
}

// recoverTablets opens every tablet under data/ and removes the data of
// tables and partitions the catalog dropped (a drop interrupted between
// the catalog update and the removal). What the engine did not write, or
// cannot place in the catalog, is left as it is.
func (e *Engine) recoverTablets() error {
	dataDir := filepath.Join(e.root, dataDirName)
	tables, err := e.fs.ReadDir(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dataDirName, err)
	}
	cat := e.mu.cat
	for _, td := range tables {
		rel := filepath.Join(dataDirName, td.Name())
		id, ok := parseID(td.Name())
		var entry *tableEntry
		if ok && td.IsDir() {
			entry = cat.byID[id]
		}
		switch {
		case entry != nil:
		case ok && td.IsDir() && cat.droppedTable(id):
			e.opts.Logger.Info("removing the data of a dropped table", "dir", rel)
			if err := e.removeOwned(rel); err != nil {
				return fmt.Errorf("remove dropped table data: %w", err)
			}
			continue
		default:
			e.opts.Logger.Warn("keeping an entry of data/ that is no table of the catalog", "entry", rel)
			continue
		}
		subs, err := e.fs.ReadDir(filepath.Join(e.root, rel))
		if err != nil {
			return fmt.Errorf("list %s: %w", rel, err)
		}
		for _, sd := range subs {
			name := sd.Name()
			pid, isPart := parsePartitionDir(name)
			switch {
			case strings.HasPrefix(name, "b") && !entry.Info.IsPartitioned():
				if err := e.recoverBucket(entry, metadata.NonPartitioned, name); err != nil {
					return err
				}
			case isPart && sd.IsDir() && entry.Info.IsPartitioned():
				if _, ok := entry.partitionByID(pid); !ok {
					if !cat.droppedPartition(entry, pid) {
						e.opts.Logger.Warn("keeping a partition directory the catalog never allocated", "dir", filepath.Join(rel, name))
						continue
					}
					e.opts.Logger.Info("removing the data of a dropped partition", "dir", filepath.Join(rel, name))
					if err := e.removeOwned(filepath.Join(rel, name)); err != nil {
						return fmt.Errorf("remove dropped partition data: %w", err)
					}
					continue
				}
				buckets, err := e.fs.ReadDir(filepath.Join(e.root, rel, name))
				if err != nil {
					return fmt.Errorf("list %s: %w", filepath.Join(rel, name), err)
				}
				for _, bd := range buckets {
					if err := e.recoverBucket(entry, pid, bd.Name()); err != nil {
						return err
					}
				}
			default:
				e.opts.Logger.Warn("ignoring a stray entry in a table directory", "entry", filepath.Join(rel, name))
			}
		}
	}
	return nil
}

func (e *Engine) recoverBucket(entry *tableEntry, partition int64, name string) error {
	b, ok := parseBucketDir(name)
	if !ok || int(b) >= entry.Info.NumBuckets {
		e.opts.Logger.Warn("ignoring a stray bucket directory", "table", entry.Info.Path.String(), "entry", name)
		return nil
	}
	tb := metadata.TableBucket{TableID: entry.Info.TableID, PartitionID: partition, Bucket: b}
	t, err := recoverTablet(e.fs, &e.opts, e.root, tb, tabletDir(tb), e.ackedEnd(tb))
	if err != nil {
		return fmt.Errorf("recover log of %s (%s): %w", entry.Info.Path, tb, err)
	}
	e.tablets[tb] = t
	e.tabIndex = nil
	return nil
}

// tabletDir is a bucket's directory relative to the engine root:
// data/<table id>/[p<partition id>/]b<bucket>.
func tabletDir(tb metadata.TableBucket) string {
	parts := []string{dataDirName, strconv.FormatInt(tb.TableID, 10)}
	if tb.PartitionID != metadata.NonPartitioned {
		parts = append(parts, "p"+strconv.FormatInt(tb.PartitionID, 10))
	}
	parts = append(parts, "b"+strconv.Itoa(int(tb.Bucket)))
	return filepath.Join(parts...)
}

func tableDir(tableID int64) string {
	return filepath.Join(dataDirName, strconv.FormatInt(tableID, 10))
}

func partitionDir(tableID, partitionID int64) string {
	return filepath.Join(tableDir(tableID), "p"+strconv.FormatInt(partitionID, 10))
}

// Close stops the background snapshots, closes the KV store and every
// log, and releases the directory. Idempotent.
func (e *Engine) Close() error {
	// Stopped before taking mu: the snapshot goroutine holds it shared.
	e.bg.once.Do(func() { close(e.bg.stop) })
	e.bg.wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mu.closed {
		return nil
	}
	e.mu.closed = true
	e.closedFlag.Store(true)
	e.watch.closeAll()
	e.views.releaseAll()
	err := e.closeAcked()
	if kerr := e.closeKv(); err == nil {
		err = kerr
	}
	if terr := e.closeTablets(); err == nil {
		err = terr
	}
	if jerr := e.closeJournal(); err == nil {
		err = jerr
	}
	if e.lock != nil {
		if lerr := e.lock.Close(); err == nil {
			err = lerr
		}
	}
	return err
}

func (e *Engine) closeJournal() error {
	if e.journal == nil {
		return nil
	}
	if err := e.journal.close(); err != nil {
		return fmt.Errorf("close commit journal: %w", err)
	}
	return nil
}

func (e *Engine) closeTablets() error {
	e.tabletsMu.Lock()
	defer e.tabletsMu.Unlock()
	var errs []error
	for tb, t := range e.tablets {
		errs = append(errs, t.close())
		delete(e.tablets, tb)
	}
	e.tabIndex = nil
	return errors.Join(errs...)
}

// readLocked takes the shared lock, failing when the engine is closed.
func (e *Engine) readLock() (*catalog, error) {
	e.mu.RLock()
	if e.mu.closed {
		e.mu.RUnlock()
		return nil, metadata.ErrClosed
	}
	return e.mu.cat, nil
}

func (e *Engine) writeLock() error {
	e.mu.Lock()
	if e.mu.closed {
		e.mu.Unlock()
		return metadata.ErrClosed
	}
	return nil
}

// commitCatalogLocked persists next and makes it the live catalog.
func (e *Engine) commitCatalogLocked(next *catalog) error {
	if err := next.persist(e.fs, e.root, e.opts.Sync); err != nil {
		return err
	}
	prev := e.mu.cat
	e.mu.cat = next
	e.notifyCatalog(prev, next)
	return nil
}

// CreateDatabase creates a database.
func (e *Engine) CreateDatabase(ctx context.Context, name string, ifNotExists bool) error {
	if err := metadata.ValidateName("database", name); err != nil {
		return err
	}
	if err := e.writeLock(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	if _, ok := e.mu.cat.Databases[name]; ok {
		if ifNotExists {
			return nil
		}
		return fmt.Errorf("database %s: %w", name, metadata.ErrExists)
	}
	next := e.mu.cat.clone()
	next.Databases[name] = &dbEntry{Tables: map[string]*tableEntry{}}
	return e.commitCatalogLocked(next)
}

// DropDatabase drops a database; one that still has tables needs cascade,
// which drops them and their data. The default database cannot be dropped.
func (e *Engine) DropDatabase(ctx context.Context, name string, ifExists, cascade bool) error {
	if err := e.writeLock(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	db, ok := e.mu.cat.Databases[name]
	if !ok {
		if ifExists {
			return nil
		}
		return fmt.Errorf("database %s: %w", name, metadata.ErrNotFound)
	}
	if name == metadata.DefaultDatabase {
		return fmt.Errorf("%w: the default database %s cannot be dropped", metadata.ErrUnsupported, name)
	}
	if len(db.Tables) > 0 && !cascade {
		return fmt.Errorf("%w: database %s is not empty (%d tables); drop it with CASCADE", metadata.ErrConstraint, name, len(db.Tables))
	}
	if len(db.Views) > 0 && !cascade {
		return fmt.Errorf("%w: database %s is not empty (%d views); drop it with CASCADE", metadata.ErrConstraint, name, len(db.Views))
	}
	next := e.mu.cat.clone()
	delete(next.Databases, name)
	next.index() // the database's tables leave byID too
	if err := e.commitCatalogLocked(next); err != nil {
		return err
	}
	var errs []error
	for _, t := range db.Tables {
		errs = append(errs, e.removeTableData(t.Info.TableID))
	}
	return errors.Join(errs...)
}

// ListDatabases returns the database names, sorted.
func (e *Engine) ListDatabases(ctx context.Context) ([]string, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	return sortedKeys(cat.Databases), nil
}

// CreateTable creates a table from its descriptor; its id is never reused.
func (e *Engine) CreateTable(ctx context.Context, desc metadata.TableDescriptor, ifNotExists bool) (metadata.TableInfo, error) {
	info, created, err := e.createTable(ctx, desc, ifNotExists)
	if err == nil && created && info.Config.AutoPartition.Enabled {
		// Its partitions ahead exist once CREATE TABLE returns, as in
		// Fluss, where the table joins the auto-partition manager.
		if _, aerr := e.autoPartition(ctx, &info, e.opts.Clock()); aerr != nil {
			e.opts.Logger.Error("auto-partitioning failed", "table", info.Path.String(), "err", aerr)
		}
	}
	return info, err
}

// createTable is CreateTable without auto-partitioning; created is false
// when the table existed (ifNotExists).
func (e *Engine) createTable(ctx context.Context, desc metadata.TableDescriptor, ifNotExists bool) (_ metadata.TableInfo, created bool, _ error) {
	if err := e.writeLock(); err != nil {
		return metadata.TableInfo{}, false, err
	}
	defer e.mu.Unlock()
	db, ok := e.mu.cat.Databases[desc.Path.Database]
	if !ok {
		return metadata.TableInfo{}, false, fmt.Errorf("database %s: %w", desc.Path.Database, metadata.ErrNotFound)
	}
	if t, ok := db.Tables[desc.Path.Table]; ok {
		if ifNotExists {
			return t.Info, false, nil
		}
		return metadata.TableInfo{}, false, fmt.Errorf("table %s: %w", desc.Path, metadata.ErrExists)
	}
	if _, ok := db.Views[desc.Path.Table]; ok {
		// Not even with IF NOT EXISTS: the name does not stand for a
		// table, so the statement's promise (the table exists) is false.
		return metadata.TableInfo{}, false, fmt.Errorf("cannot create table %s: a view of that name exists: %w", desc.Path, metadata.ErrExists)
	}
	next := e.mu.cat.clone()
	// An id whose files are still on disk (a catalog older than them) is
	// skipped: the new table would take them for its own.
	for e.idInUse(next.NextTableID) {
		e.opts.Logger.Warn("skipping a table id whose files remain", "table_id", next.NextTableID)
		next.SkippedTableIDs = append(next.SkippedTableIDs, next.NextTableID)
		next.NextTableID++
	}
	info, err := metadata.NewTableInfo(desc, next.NextTableID, e.opts.DefaultBucketNumber, time.Now().UTC())
	if err != nil {
		return metadata.TableInfo{}, false, err
	}
	entry := &tableEntry{Info: info}
	if err := entry.prepare(); err != nil {
		return metadata.TableInfo{}, false, err
	}
	next.NextTableID++
	next.Databases[desc.Path.Database].Tables[desc.Path.Table] = entry
	next.byID[info.TableID] = entry
	if err := e.commitCatalogLocked(next); err != nil {
		return metadata.TableInfo{}, false, err
	}
	return info, true, nil
}

// DropTable drops a table and removes its data.
func (e *Engine) DropTable(ctx context.Context, path metadata.TablePath, ifExists bool) error {
	if err := e.writeLock(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	t, err := e.mu.cat.table(path)
	if err != nil {
		if ifExists && errors.Is(err, metadata.ErrNotFound) {
			return nil
		}
		return err
	}
	next := e.mu.cat.clone()
	delete(next.Databases[path.Database].Tables, path.Table)
	delete(next.byID, t.Info.TableID)
	if err := e.commitCatalogLocked(next); err != nil {
		return err
	}
	return e.removeTableData(t.Info.TableID)
}

// removeTableData closes a dropped table's tablets and removes its files.
// A crash before the removal leaves files that the next Open removes.
func (e *Engine) removeTableData(tableID int64) error {
	e.closeTabletsWhere(func(tb metadata.TableBucket) bool { return tb.TableID == tableID })
	kerr := e.dropKvState(tableID, nil)
	if err := e.removeOwned(tableDir(tableID)); err != nil {
		return errors.Join(fmt.Errorf("remove table data: %w", err), kerr)
	}
	return kerr
}

// closeTabletsWhere forgets the tablets of a dropped table or partition.
// Readers that took a snapshot before the drop keep their segments open
// and finish from it (on Unix the files stay readable after they are
// removed); a reader opened after it finds the bucket gone.
func (e *Engine) closeTabletsWhere(match func(metadata.TableBucket) bool) {
	e.tabletsMu.Lock()
	defer e.tabletsMu.Unlock()
	for tb, t := range e.tablets {
		if match(tb) {
			t.dropped()
			delete(e.tablets, tb)
			e.tabIndex = nil
		}
	}
}

// ListTables returns the table names of a database, sorted.
func (e *Engine) ListTables(ctx context.Context, database string) ([]string, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	db, ok := cat.Databases[database]
	if !ok {
		return nil, fmt.Errorf("database %s: %w", database, metadata.ErrNotFound)
	}
	return sortedKeys(db.Tables), nil
}

// TableInfo returns a table's info.
func (e *Engine) TableInfo(ctx context.Context, path metadata.TablePath) (metadata.TableInfo, error) {
	cat, err := e.readLock()
	if err != nil {
		return metadata.TableInfo{}, err
	}
	defer e.mu.RUnlock()
	t, err := cat.table(path)
	if err != nil {
		return metadata.TableInfo{}, err
	}
	return t.Info, nil
}

// AlterTable sets table options (ALTER TABLE t SET (...)).
func (e *Engine) AlterTable(ctx context.Context, path metadata.TablePath, set map[string]string) (metadata.TableInfo, error) {
	info, err := e.alterInfo(path, func(_ *catalog, info metadata.TableInfo) (metadata.TableInfo, error) {
		return metadata.AlterOptions(info, set)
	})
	if err == nil && info.Config.AutoPartition.Enabled {
		// Enabling auto-partitioning, or a new count ahead or behind,
		// takes effect at once, as at CREATE TABLE.
		if _, aerr := e.autoPartition(ctx, &info, e.opts.Clock()); aerr != nil {
			e.opts.Logger.Error("auto-partitioning failed", "table", info.Path.String(), "err", aerr)
		}
	}
	return info, err
}

// partitionSpec turns a partition spec (key -> value text) into the
// partition's rendered values, checking that it names every partition key
// exactly once.
func partitionSpec(info *metadata.TableInfo, spec map[string]string) ([]string, error) {
	if !info.IsPartitioned() {
		return nil, fmt.Errorf("%w: table %s is not partitioned", metadata.ErrInvalidValue, info.Path)
	}
	values := make([]string, len(info.PartitionKeys))
	used := 0
	for i, key := range info.PartitionKeys {
		var (
			text  string
			found bool
		)
		for k, v := range spec {
			if strings.EqualFold(k, key) {
				text, found = v, true
				used++
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: partition spec of %s lacks partition key %s", metadata.ErrInvalidValue, info.Path, key)
		}
		col := info.Schema.Columns[info.Schema.ColumnIndex(key)]
		v, err := metadata.ParsePartitionValue(col.Type, text)
		if err != nil {
			return nil, fmt.Errorf("partition key %s value %q: %w", key, text, err)
		}
		if values[i], err = metadata.PartitionValueString(col.Type, v); err != nil {
			return nil, fmt.Errorf("partition key %s value %q: %w", key, text, err)
		}
	}
	if used != len(spec) {
		extra := []string{}
		for k := range spec {
			if !info.IsPartitionKey(k) {
				extra = append(extra, k)
			}
		}
		slices.Sort(extra)
		return nil, fmt.Errorf("%w: partition spec of %s names %s, which are not its partition keys %v", metadata.ErrInvalidValue, info.Path, strings.Join(extra, ", "), info.PartitionKeys)
	}
	return values, nil
}

// CreatePartition creates a partition of a partitioned table.
func (e *Engine) CreatePartition(ctx context.Context, path metadata.TablePath, spec map[string]string, ifNotExists bool) (metadata.PartitionInfo, error) {
	if err := e.writeLock(); err != nil {
		return metadata.PartitionInfo{}, err
	}
	defer e.mu.Unlock()
	t, err := e.mu.cat.table(path)
	if err != nil {
		return metadata.PartitionInfo{}, err
	}
	values, err := partitionSpec(&t.Info, spec)
	if err != nil {
		return metadata.PartitionInfo{}, err
	}
	name := metadata.PartitionName(values)
	if p, ok := t.partitionByName(name); ok {
		if ifNotExists {
			return p, nil
		}
		return metadata.PartitionInfo{}, fmt.Errorf("partition %s of %s: %w", name, path, metadata.ErrExists)
	}
	infos, err := e.addPartitionsLocked(t.Info.TableID, [][]string{values})
	if err != nil {
		return metadata.PartitionInfo{}, err
	}
	return infos[0], nil
}

// addPartitionsLocked creates partitions (skipping ones that exist) in one
// catalog change and returns them.
func (e *Engine) addPartitionsLocked(tableID int64, values [][]string) ([]metadata.PartitionInfo, error) {
	next := e.mu.cat.clone()
	entry := next.byID[tableID]
	out := make([]metadata.PartitionInfo, len(values))
	for i, v := range values {
		name := metadata.PartitionName(v)
		if p, ok := entry.partitionByName(name); ok {
			out[i] = p
			continue
		}
		p := metadata.PartitionInfo{ID: next.NextPartitionID, Name: name, Values: slices.Clone(v)}
		next.NextPartitionID++
		entry.Partitions = append(entry.Partitions, p)
		out[i] = p
	}
	if err := e.commitCatalogLocked(next); err != nil {
		return nil, err
	}
	return out, nil
}

// DropPartition drops a partition and removes its data.
func (e *Engine) DropPartition(ctx context.Context, path metadata.TablePath, spec map[string]string, ifExists bool) error {
	if err := e.writeLock(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	t, err := e.mu.cat.table(path)
	if err != nil {
		return err
	}
	values, err := partitionSpec(&t.Info, spec)
	if err != nil {
		return err
	}
	name := metadata.PartitionName(values)
	p, ok := t.partitionByName(name)
	if !ok {
		if ifExists {
			return nil
		}
		return fmt.Errorf("partition %s of %s: %w", name, path, metadata.ErrNotFound)
	}
	next := e.mu.cat.clone()
	entry := next.byID[t.Info.TableID]
	entry.Partitions = slices.DeleteFunc(entry.Partitions, func(x metadata.PartitionInfo) bool { return x.ID == p.ID })
	if entry.Lake != nil && !slices.Contains(entry.LakePartitions, name) {
		for b := range entry.Info.NumBuckets {
			if off, ok := entry.Lake.offset(metadata.TableBucket{TableID: t.Info.TableID, PartitionID: p.ID, Bucket: int32(b)}); ok && off > 0 {
				entry.LakePartitions = append(slices.Clone(entry.LakePartitions), name)
				break
			}
		}
	}
	if err := e.commitCatalogLocked(next); err != nil {
		return err
	}
	e.closeTabletsWhere(func(tb metadata.TableBucket) bool {
		return tb.TableID == t.Info.TableID && tb.PartitionID == p.ID
	})
	kerr := e.dropKvState(t.Info.TableID, &p.ID)
	if err := e.removeOwned(partitionDir(t.Info.TableID, p.ID)); err != nil {
		return errors.Join(fmt.Errorf("remove partition data: %w", err), kerr)
	}
	return kerr
}

// ListPartitions returns a table's partitions ordered by their typed
// values (an INT partition 10 sorts after 2).
func (e *Engine) ListPartitions(ctx context.Context, path metadata.TablePath) ([]metadata.PartitionInfo, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	t, err := cat.table(path)
	if err != nil {
		return nil, err
	}
	if !t.Info.IsPartitioned() {
		return nil, fmt.Errorf("%w: table %s is not partitioned", metadata.ErrInvalidValue, path)
	}
	idx := t.Info.PartitionKeyIndexes()
	type typed struct {
		p    metadata.PartitionInfo
		vals []any
	}
	list := make([]typed, len(t.Partitions))
	for i, p := range t.Partitions {
		list[i].p = p
		for k, v := range p.Values {
			var tv any = v
			if k < len(idx) {
				if x, err := metadata.ParsePartitionValue(t.Info.Schema.Columns[idx[k]].Type, v); err == nil {
					tv = x
				}
			}
			list[i].vals = append(list[i].vals, tv)
		}
	}
	slices.SortStableFunc(list, func(a, b typed) int {
		for k := range min(len(a.vals), len(b.vals)) {
			if c := metadata.Compare(a.vals[k], b.vals[k]); c != 0 {
				return c
			}
		}
		return len(a.vals) - len(b.vals)
	})
	out := make([]metadata.PartitionInfo, len(list))
	for i, x := range list {
		out[i] = x.p
		out[i].Values = slices.Clone(x.p.Values)
	}
	return out, nil
}

// ListOffsets returns each bucket's log start offset (OffsetEarliest) or
// high watermark (OffsetLatest). A bucket never written to has both 0.
//
// The high watermarks are one cut: every commit that touches the buckets
// is in all of them or in none (they are read under cutMu, as a read
// view's are). A scan planned at them sees a
// table as it was at one instant, as a statement of SQLite or DuckDB
// does, not one bucket before a commit and another after it.
func (e *Engine) ListOffsets(ctx context.Context, buckets []metadata.TableBucket, spec metadata.OffsetSpec) (map[metadata.TableBucket]int64, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	for _, tb := range buckets {
		if err := checkBucket(cat, tb); err != nil {
			return nil, err
		}
	}
	if spec == metadata.OffsetLatest {
		return e.latestOffsetsCut(buckets), nil
	}
	out := make(map[metadata.TableBucket]int64, len(buckets))
	for _, tb := range buckets {
		t := e.tablet(tb)
		switch spec {
		case metadata.OffsetEarliest:
			if t != nil {
				out[tb] = t.logStart.Load()
			} else {
				out[tb] = 0
			}
		default:
			return nil, fmt.Errorf("%w: offset spec %d", metadata.ErrUnsupported, spec)
		}
	}
	return out, nil
}

// lockOrder is the one order in which every writer and reader locks
// several buckets (table, partition, bucket), so none of them can
// deadlock another.
func lockOrder(a, b metadata.TableBucket) int {
	return cmp.Or(cmp.Compare(a.TableID, b.TableID), cmp.Compare(a.PartitionID, b.PartitionID), cmp.Compare(a.Bucket, b.Bucket))
}

// tabletIndex is the engine's tablets as a list, with each tablet's place
// in it: what a read view's cut walks (a slice, not the map) and keeps to
// find a bucket's offsets. Immutable; shared by the views cut while the
// set of tablets stays the same.
type tabletIndex struct {
	pos  map[metadata.TableBucket]int
	list []*logTablet
}

// tabletIndexLocked returns the index of the tablets, rebuilding it when
// they changed. The caller holds tabletsMu.
func (e *Engine) tabletIndexLocked() *tabletIndex {
	if e.tabIndex == nil {
		x := &tabletIndex{pos: make(map[metadata.TableBucket]int, len(e.tablets)), list: make([]*logTablet, 0, len(e.tablets))}
		for tb, t := range e.tablets {
			x.pos[tb] = len(x.list)
			x.list = append(x.list, t)
		}
		e.tabIndex = x
	}
	return e.tabIndex
}

// latestOffsetsCut reads the high watermarks of buckets under cutMu held
// exclusively, as ReadView does: every commit publishes its high
// watermarks together under cutMu shared, so the ones read here are one
// cut; and a commit creates its tablets before it publishes anything, so
// a bucket found without a tablet (reported 0) has no commit before it.
func (e *Engine) latestOffsetsCut(buckets []metadata.TableBucket) map[metadata.TableBucket]int64 {
	out := make(map[metadata.TableBucket]int64, len(buckets))
	e.cutMu.Lock()
	defer e.cutMu.Unlock()
	e.tabletsMu.Lock()
	defer e.tabletsMu.Unlock()
	for _, tb := range buckets {
		if t := e.tablets[tb]; t != nil {
			out[tb] = t.hw.Load()
		} else {
			out[tb] = 0
		}
	}
	return out
}

// checkBucket verifies that tb names an existing bucket.
func checkBucket(cat *catalog, tb metadata.TableBucket) error {
	t := cat.byID[tb.TableID]
	if t == nil {
		// Ids are never reused: one below the next id was dropped, which a
		// reader that planned before the drop is told.
		if cat.droppedTable(tb.TableID) {
			return fmt.Errorf("%s: table %d was dropped: %w", tb, tb.TableID, metadata.ErrNotFound)
		}
		return fmt.Errorf("%s: table %d: %w", tb, tb.TableID, metadata.ErrNotFound)
	}
	if t.Info.IsPartitioned() {
		if _, ok := t.partitionByID(tb.PartitionID); !ok {
			if cat.droppedPartition(t, tb.PartitionID) {
				return fmt.Errorf("%s: partition %d of %s was dropped: %w", tb, tb.PartitionID, t.Info.Path, metadata.ErrNotFound)
			}
			return fmt.Errorf("%s: partition %d of %s: %w", tb, tb.PartitionID, t.Info.Path, metadata.ErrNotFound)
		}
	} else if tb.PartitionID != metadata.NonPartitioned {
		return fmt.Errorf("%s: %s is not partitioned: %w", tb, t.Info.Path, metadata.ErrNotFound)
	}
	if tb.Bucket < 0 || int(tb.Bucket) >= t.Info.NumBuckets {
		return fmt.Errorf("%s: bucket %d of %s (%d buckets): %w", tb, tb.Bucket, t.Info.Path, t.Info.NumBuckets, metadata.ErrNotFound)
	}
	return nil
}

func (e *Engine) tablet(tb metadata.TableBucket) *logTablet {
	e.tabletsMu.Lock()
	defer e.tabletsMu.Unlock()
	return e.tablets[tb]
}

// tabletForWrite returns tb's tablet, creating it on first write. The
// caller holds mu shared.
func (e *Engine) tabletForWrite(tb metadata.TableBucket) (*logTablet, error) {
	e.tabletsMu.Lock()
	defer e.tabletsMu.Unlock()
	if t := e.tablets[tb]; t != nil {
		return t, nil
	}
	t, err := openTablet(e.fs, &e.opts, e.root, tb, tabletDir(tb))
	if err != nil {
		return nil, err
	}
	if e.opts.Sync {
		// Make the new directories themselves durable.
		for d := filepath.Dir(t.dir); ; d = filepath.Dir(d) {
			if err := e.fs.SyncDir(d); err != nil {
				t.close()
				return nil, fmt.Errorf("create log of %s: %w", tb, err)
			}
			if d == e.root || d == filepath.Dir(d) {
				break
			}
		}
	}
	e.tablets[tb] = t
	e.tabIndex = nil
	return t, nil
}

// AddColumns adds nullable columns at the end of a table's schema (ALTER
// TABLE ... ADD COLUMN) under a new schema id; see metadata.AddColumns.
// Nothing stored is rewritten: log batches, KV values, KV snapshots and
// lake files keep the schema id they were written with, and every reader
// reads the columns added since as NULL. The lake's readers of the new
// schema read its old files the same way.
func (e *Engine) AddColumns(ctx context.Context, path metadata.TablePath, cols []metadata.Column) (metadata.TableInfo, error) {
	if err := ctx.Err(); err != nil {
		return metadata.TableInfo{}, err
	}
	return e.alterInfo(path, func(_ *catalog, info metadata.TableInfo) (metadata.TableInfo, error) {
		return metadata.AddColumns(info, cols)
	})
}
