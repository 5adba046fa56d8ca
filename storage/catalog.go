package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

const (
	catalogFile    = "catalog.json"
	catalogTmpFile = "catalog.json.tmp"
	catalogVersion = 1
	// catalogViewsVersion is the version of a catalog that holds views. A
	// catalog without views keeps version 1, which every release reads; one
	// with views says 2, so that a release without views refuses it rather
	// than rewriting it without them.
	catalogViewsVersion = 2
	// catalogDefaultsVersion is the version of a catalog with a column
	// DEFAULT, views or not: a release without defaults refuses it
	// rather than rewriting it without them.
	catalogDefaultsVersion = 3
	// catalogForeignKeysVersion is the version of a catalog with a
	// foreign key, defaults and views or not: a release that does not
	// record foreign keys refuses it rather than rewriting it without
	// them.
	catalogForeignKeysVersion = 4
	// catalogIndexesVersion is the version of a catalog with a built
	// secondary index: a release that only records indexes would write
	// rows without their entries, which the index's reads would miss.
	catalogIndexesVersion = 5
	// catalogSlotRowsVersion is the version of a catalog with a built
	// UNIQUE index, whose slots carry their rows: a release whose slots
	// were hints would leave them carrying stale rows (see kvIndexTag).
	catalogSlotRowsVersion = 6
)

// catalog is the engine's metadata: databases, tables, partitions and the
// id counters. It is copied on write (clone, change, persist, swap), so a
// failed persist leaves the live catalog untouched.
type catalog struct {
	Version         int                 `json:"version"`
	NextTableID     int64               `json:"next_table_id"`
	NextPartitionID int64               `json:"next_partition_id"`
	Databases       map[string]*dbEntry `json:"databases"`
	// SkippedTableIDs are ids CreateTable passed over because files of
	// theirs were on disk that the catalog did not know (it was older
	// than them): they were never a table here, so they are not dropped
	// and their files are not removed.
	SkippedTableIDs []int64 `json:"skipped_table_ids,omitempty"`

	byID map[int64]*tableEntry // derived
}

type dbEntry struct {
	Tables map[string]*tableEntry `json:"tables"`
	// Views share the database's namespace with Tables: a name is in one
	// map or neither. Nil when the database has none.
	Views map[string]*metadata.ViewInfo `json:"views,omitempty"`
}

type tableEntry struct {
	Info       metadata.TableInfo       `json:"info"`
	Partitions []metadata.PartitionInfo `json:"partitions,omitempty"`
	// Lake is the engine's record of the table's latest lake snapshot
	// (phase 2 of a tiering commit); nil before the first. It is replaced
	// whole, never changed in place, so catalog copies may share it.
	Lake *lakeRecord `json:"lake,omitempty"`
	// LakePartitions names the dropped partitions whose tiered rows the
	// lake keeps: reads still return them (under the name, merged with a
	// partition created again under it), so a point lookup there must be
	// answered by a scan (ErrLookupInLake). Replaced, never appended to
	// in place, so catalog copies may share it.
	LakePartitions []string `json:"lake_partitions,omitempty"`

	// Derived, never stored: rebuilt by prepare.
	arrow *arrow.Schema
	// rowEnc encodes uncompressed batches straight from rows; nil when
	// the table's log is compressed or a column type needs the Arrow
	// builders.
	rowEnc *logformat.RowEncoder
	types  []metadata.DataType
	// The key column layouts, by column index, with their types.
	pk, physKey, bucketKey, partKey []int
	pkTypes, physTypes, bucketTypes []metadata.DataType
	stats                           []int // statistics columns
	// roundRobin is the next bucket of keyless routing; shared by the
	// copies of one table's entry so it survives catalog changes.
	roundRobin *atomic.Uint64
	// indexes are the table's secondary indexes, ready to encode entries.
	indexes []*tableIndex
	// uniqueMu is held by a commit to a table with a UNIQUE index from
	// its check to its write; shared by the copies of one table's entry.
	uniqueMu *sync.Mutex
}

func newCatalog() *catalog {
	c := &catalog{Version: catalogVersion, NextTableID: 1, NextPartitionID: 1, Databases: map[string]*dbEntry{}}
	c.Databases[metadata.DefaultDatabase] = &dbEntry{Tables: map[string]*tableEntry{}}
	c.index()
	return c
}

func (c *catalog) index() {
	c.byID = map[int64]*tableEntry{}
	for _, db := range c.Databases {
		for _, t := range db.Tables {
			c.byID[t.Info.TableID] = t
		}
	}
}

// clone copies the catalog deeply enough that changing the copy's maps and
// entries does not touch c. TableInfo values are immutable and shared.
func (c *catalog) clone() *catalog {
	out := *c
	out.SkippedTableIDs = slices.Clone(c.SkippedTableIDs)
	out.Databases = make(map[string]*dbEntry, len(c.Databases))
	for name, db := range c.Databases {
		tables := make(map[string]*tableEntry, len(db.Tables))
		for tn, t := range db.Tables {
			cp := *t
			cp.Partitions = slices.Clone(t.Partitions)
			tables[tn] = &cp
		}
		out.Databases[name] = &dbEntry{Tables: tables, Views: maps.Clone(db.Views)}
	}
	out.index()
	return &out
}

// prepareKeys fills the column types and the key column layouts.
func (t *tableEntry) prepareKeys() {
	info := &t.Info
	t.types = make([]metadata.DataType, len(info.Schema.Columns))
	for i, c := range info.Schema.Columns {
		t.types[i] = c.Type
	}
	typesOf := func(idx []int) []metadata.DataType {
		out := make([]metadata.DataType, len(idx))
		for j, i := range idx {
			out[j] = t.types[i]
		}
		return out
	}
	t.pk, t.physKey, t.bucketKey, t.partKey = info.PrimaryKeyIndexes(), info.PhysicalKeyIndexes(), info.BucketKeyIndexes(), info.PartitionKeyIndexes()
	t.pkTypes, t.physTypes, t.bucketTypes = typesOf(t.pk), typesOf(t.physKey), typesOf(t.bucketKey)
}

// prepare fills a table entry's derived fields.
func (t *tableEntry) prepare() error {
	info := &t.Info
	t.arrow = metadata.ArrowSchema(info.Schema.Columns)
	t.rowEnc = nil
	if c := info.Config.Compression; c == "" || c == logformat.CompressionNone {
		t.rowEnc = logformat.NewRowEncoder(t.arrow)
	}
	t.prepareKeys()
	t.stats = nil
	if names := info.Config.StatisticsColumns; names == nil {
		for i, c := range info.Schema.Columns {
			if c.Type.HasOrder() {
				t.stats = append(t.stats, i)
			}
		}
	} else {
		idx, err := info.Schema.Indexes(names)
		if err != nil {
			return fmt.Errorf("table %s: statistics columns: %w", info.Path, err)
		}
		t.stats = idx
	}
	if t.roundRobin == nil {
		t.roundRobin = new(atomic.Uint64)
	}
	t.indexes = tableIndexes(info)
	if t.uniqueMu == nil {
		t.uniqueMu = new(sync.Mutex)
	}
	return nil
}

// partitionByName finds the partition of a name this version renders, or
// else the partition an earlier version named coarser for the same values
// (metadata.CoarsePartitionName): its rows keep going there, so that a key
// stays in one partition.
func (t *tableEntry) partitionByName(name string) (metadata.PartitionInfo, bool) {
	if p, ok := t.partitionNamed(name); ok {
		return p, true
	}
	if !t.Info.IsPartitioned() {
		return metadata.PartitionInfo{}, false
	}
	types := make([]metadata.DataType, 0, len(t.Info.PartitionKeys))
	for _, c := range t.Info.PartitionKeyIndexes() {
		types = append(types, t.Info.Schema.Columns[c].Type)
	}
	if coarse, ok := metadata.CoarsePartitionName(types, strings.Split(name, "$")); ok {
		return t.partitionNamed(coarse)
	}
	return metadata.PartitionInfo{}, false
}

func (t *tableEntry) partitionNamed(name string) (metadata.PartitionInfo, bool) {
	for _, p := range t.Partitions {
		if p.Name == name {
			return p, true
		}
	}
	return metadata.PartitionInfo{}, false
}

func (t *tableEntry) partitionByID(id int64) (metadata.PartitionInfo, bool) {
	for _, p := range t.Partitions {
		if p.ID == id {
			return p, true
		}
	}
	return metadata.PartitionInfo{}, false
}

func (c *catalog) table(path metadata.TablePath) (*tableEntry, error) {
	db, ok := c.Databases[path.Database]
	if !ok {
		return nil, fmt.Errorf("database %s: %w", path.Database, metadata.ErrNotFound)
	}
	t, ok := db.Tables[path.Table]
	if !ok {
		if _, view := db.Views[path.Table]; view {
			return nil, &metadata.ViewError{Path: path}
		}
		return nil, fmt.Errorf("table %s: %w", path, metadata.ErrNotFound)
	}
	return t, nil
}

// openCatalog reads the catalog of the engine's directory, or creates the
// database when the directory holds nothing the engine writes. A
// directory with engine files but no catalog is refused: taking it for a
// new database would take every table in it for dropped.
func (e *Engine) openCatalog() (*catalog, error) {
	_, err := e.fs.Stat(filepath.Join(e.root, catalogFile))
	if !errors.Is(err, fs.ErrNotExist) {
		return loadCatalog(e.fs, e.root)
	}
	if err := e.checkNewDirectory(); err != nil {
		return nil, err
	}
	c := newCatalog()
	// Written before any other file of the database, and synced whatever
	// Options.Sync says: a crash never leaves engine files without the
	// catalog that explains them.
	if err := c.persist(e.fs, e.root, true); err != nil {
		return nil, fmt.Errorf("create database %s: %w", e.root, err)
	}
	return c, nil
}

// loadCatalog reads the catalog of dir.
func loadCatalog(fsys FS, dir string) (*catalog, error) {
	name := filepath.Join(dir, catalogFile)
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat catalog: %w", err)
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	c := &catalog{}
	if err := json.Unmarshal(buf, c); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", metadata.ErrCorrupt, catalogFile, err)
	}
	if c.Version < catalogVersion || c.Version > catalogSlotRowsVersion {
		return nil, fmt.Errorf("%w: %s has version %d, want %d to %d", metadata.ErrCorrupt, catalogFile, c.Version, catalogVersion, catalogSlotRowsVersion)
	}
	if c.Databases == nil {
		c.Databases = map[string]*dbEntry{}
	}
	if _, ok := c.Databases[metadata.DefaultDatabase]; !ok {
		c.Databases[metadata.DefaultDatabase] = &dbEntry{}
	}
	for dbName, db := range c.Databases {
		if db == nil {
			db = &dbEntry{}
			c.Databases[dbName] = db
		}
		if db.Tables == nil {
			db.Tables = map[string]*tableEntry{}
		}
		for tn, t := range db.Tables {
			if t == nil {
				return nil, fmt.Errorf("%w: %s: table %s.%s has no entry", metadata.ErrCorrupt, catalogFile, dbName, tn)
			}
			if err := t.Info.Resolve(); err != nil {
				return nil, fmt.Errorf("%w: %s: table %s: %v", metadata.ErrCorrupt, catalogFile, t.Info.Path, err)
			}
			if t.Info.HasPrimaryKey() {
				// An index without an id was recorded by a release that
				// built none: it has no entries, so it goes (CREATE INDEX,
				// or GORM's next AutoMigrate, builds it). A log table's
				// stay listed, as they were; nothing reads them.
				t.Info.Indexes = slices.DeleteFunc(slices.Clone(t.Info.Indexes), func(ix metadata.DeclaredIndex) bool { return ix.ID == 0 })
			}
			if err := t.prepare(); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", metadata.ErrCorrupt, catalogFile, err)
			}
		}
		if err := checkViews(dbName, db); err != nil {
			return nil, err
		}
	}
	c.index()
	if err := c.checkCounters(); err != nil {
		return nil, err
	}
	return c, nil
}

// checkCounters verifies that the id counters are above every id in use:
// a counter behind them would hand out an id again.
func (c *catalog) checkCounters() error {
	if c.NextTableID < 1 || c.NextPartitionID < 1 {
		return fmt.Errorf("%w: %s: next_table_id %d and next_partition_id %d must be positive", metadata.ErrCorrupt, catalogFile, c.NextTableID, c.NextPartitionID)
	}
	for _, t := range c.byID {
		if t.Info.TableID >= c.NextTableID {
			return fmt.Errorf("%w: %s: table %s has id %d, not below next_table_id %d", metadata.ErrCorrupt, catalogFile, t.Info.Path, t.Info.TableID, c.NextTableID)
		}
		for _, p := range t.Partitions {
			if p.ID >= c.NextPartitionID {
				return fmt.Errorf("%w: %s: partition %s of %s has id %d, not below next_partition_id %d", metadata.ErrCorrupt, catalogFile, p.Name, t.Info.Path, p.ID, c.NextPartitionID)
			}
		}
	}
	return nil
}

// persist writes the catalog atomically: a temporary file, fsync, rename
// over the old one, fsync of the directory (the fsyncs only when sync).
func (c *catalog) persist(fsys FS, dir string, sync bool) error {
	out := *c
	out.Version = catalogVersion
	if c.hasViews() {
		out.Version = catalogViewsVersion
	}
	if c.hasDefaults() {
		out.Version = catalogDefaultsVersion
	}
	if c.hasForeignKeys() {
		out.Version = catalogForeignKeysVersion
	}
	if c.hasIndexes() {
		out.Version = catalogIndexesVersion
	}
	if c.hasUniqueIndexes() {
		out.Version = catalogSlotRowsVersion
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("encode catalog: %w", err)
	}
	// The checkpoint's own directory sync may make the rename durable
	// even when sync is off; writeFileAtomic syncs the bytes regardless.
	return writeFileAtomic(fsys, dir, catalogFile, catalogTmpFile, data, sync)
}

// hasIndexes reports whether a table has a built secondary index.
func (c *catalog) hasIndexes() bool {
	for _, db := range c.Databases {
		for _, t := range db.Tables {
			if slices.ContainsFunc(t.Info.Indexes, func(ix metadata.DeclaredIndex) bool { return ix.ID > 0 }) {
				return true
			}
		}
	}
	return false
}

// hasUniqueIndexes reports whether a table has a built UNIQUE index.
func (c *catalog) hasUniqueIndexes() bool {
	for _, db := range c.Databases {
		for _, t := range db.Tables {
			if slices.ContainsFunc(t.Info.Indexes, func(ix metadata.DeclaredIndex) bool { return ix.ID > 0 && ix.Unique }) {
				return true
			}
		}
	}
	return false
}

// hasDefaults reports whether a table has a column with a DEFAULT.
func (c *catalog) hasDefaults() bool {
	for _, db := range c.Databases {
		for _, t := range db.Tables {
			if t.Info.Schema.HasDefaults() {
				return true
			}
		}
	}
	return false
}

// hasForeignKeys reports whether a table has a foreign key.
func (c *catalog) hasForeignKeys() bool {
	for _, db := range c.Databases {
		for _, t := range db.Tables {
			if len(t.Info.ForeignKeys) > 0 {
				return true
			}
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
