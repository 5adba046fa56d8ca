package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
)

// The engine removes only what it wrote: entries whose names parse as its
// own (a table id, p<partition id>, b<bucket>, a segment, index or KV
// snapshot file) and whose ids the catalog says it allocated and dropped.
// Anything else found where the engine keeps its files stays where it is,
// with a warning in the log; a directory holding such a thing is not
// removed either.

// lakeDirName is where the driver keeps the lake tier (lake.Options.Dir);
// the engine only looks at it, to tell a database from a fresh directory
// and to keep table ids whose lake is still there from being reused.
const lakeDirName = "lake"

// engineEntries are the root entries only an engine writes; any of them
// without catalog.json means the catalog was lost, not a new database.
// The order is the one the error reports them in.
var engineEntries = []string{dataDirName, kvDirName, kvSnapDirName, lakeDirName, journalFile, ackedFile}

// parseID reads a table or partition id written by strconv.FormatInt:
// positive and in its canonical form, so "007" or "+7" are not ids.
func parseID(name string) (int64, bool) {
	id, err := strconv.ParseInt(name, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != name {
		return 0, false
	}
	return id, true
}

// parsePartitionDir reads the id of a p<partition id> directory.
func parsePartitionDir(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "p")
	if !ok {
		return 0, false
	}
	return parseID(rest)
}

func isPartitionDir(en fs.DirEntry) bool {
	_, ok := parsePartitionDir(en.Name())
	return ok && en.IsDir()
}

// parseBucketDir reads the bucket of a b<bucket> directory.
func parseBucketDir(name string) (int32, bool) {
	rest, ok := strings.CutPrefix(name, "b")
	if !ok {
		return 0, false
	}
	b, err := strconv.ParseInt(rest, 10, 32)
	if err != nil || b < 0 || strconv.FormatInt(b, 10) != rest {
		return 0, false
	}
	return int32(b), true
}

// ownedFileExts are the files of bucket directories, under data/ and
// kv-snapshots/, each named <id %020d><ext>.
var ownedFileExts = []string{".log", ".index", kvSnapExt, kvSnapTmpExt}

// parseOwnedFile reads the id of a <id %020d><ext> file of ext.
func parseOwnedFile(name, ext string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, ext)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id < 0 || fmt.Sprintf("%020d", id) != digits {
		return 0, false
	}
	return id, true
}

func isOwnedFile(name string) bool {
	for _, ext := range ownedFileExts {
		if _, ok := parseOwnedFile(name, ext); ok {
			return true
		}
	}
	return false
}

// droppedTable reports whether id is one the catalog allocated to a table
// that no longer exists.
func (c *catalog) droppedTable(id int64) bool {
	return id > 0 && id < c.NextTableID && c.byID[id] == nil && !slices.Contains(c.SkippedTableIDs, id)
}

// droppedPartition reports whether id is one the catalog allocated to a
// partition that table t no longer has.
func (c *catalog) droppedPartition(t *tableEntry, id int64) bool {
	if id <= 0 || id >= c.NextPartitionID {
		return false
	}
	_, live := t.partitionByID(id)
	return !live
}

// DroppedTable reports whether id is the id of a table that was dropped:
// one the catalog allocated and no longer has. The lake's owner uses it
// to remove the lake of such a table and nothing else.
func (e *Engine) DroppedTable(id int64) bool {
	cat, err := e.readLock()
	if err != nil {
		return false
	}
	defer e.mu.RUnlock()
	return cat.droppedTable(id)
}

// DroppedPartition reports whether partitionID is a partition of table
// tableID that was dropped (or the table was): readers that planned before
// the drop end that partition's reads rather than fail.
func (e *Engine) DroppedPartition(tableID, partitionID int64) bool {
	cat, err := e.readLock()
	if err != nil {
		return false
	}
	defer e.mu.RUnlock()
	t := cat.byID[tableID]
	if t == nil {
		return cat.droppedTable(tableID)
	}
	return cat.droppedPartition(t, partitionID)
}

// checkNewDirectory is Open's check of a directory without catalog.json:
// it is a new database only when it holds nothing the engine writes.
func (e *Engine) checkNewDirectory() error {
	var found []string
	for _, name := range engineEntries {
		fi, err := e.fs.Stat(filepath.Join(e.root, name))
		switch {
		case err == nil && fi.IsDir():
			found = append(found, name+"/")
		case err == nil:
			found = append(found, name)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("open %s: %w", e.root, err)
		}
	}
	if len(found) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s holds %s but %s is missing (restore it: without it every table would look dropped)",
		metadata.ErrCorrupt, e.root, strings.Join(found, ", "), catalogFile)
}

// idInUse reports whether anything of a table with this id is still on
// disk, so CreateTable must not give the id to a new table.
func (e *Engine) idInUse(id int64) bool {
	name := strconv.FormatInt(id, 10)
	for _, dir := range []string{dataDirName, kvSnapDirName, lakeDirName} {
		if _, err := e.fs.Stat(filepath.Join(e.root, dir, name)); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	if e.kv == nil {
		return false
	}
	start, end := tableRange(kvMetaTag, id, nil)
	it, err := e.kv.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return true
	}
	found := it.First()
	return it.Close() != nil || found
}

// removeOwned removes rel (relative to the root: a dropped table's or
// partition's directory under data/ or kv-snapshots/) and what the engine
// wrote in it: partition and bucket directories and their segment, index
// and snapshot files. Anything else is left, with the directories on its
// path, and logged. A missing rel is not an error.
func (e *Engine) removeOwned(rel string) error {
	abs := filepath.Join(e.root, rel)
	entries, err := e.fs.ReadDir(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", rel, err)
	}
	kept := false
	for _, en := range entries {
		name := en.Name()
		child := filepath.Join(rel, name)
		_, isPart := parsePartitionDir(name)
		_, isBucket := parseBucketDir(name)
		switch {
		case en.IsDir() && (isPart || isBucket):
			if err := e.removeOwned(child); err != nil {
				return err
			}
			if _, err := e.fs.Stat(filepath.Join(e.root, child)); err == nil {
				kept = true
			}
		case !en.IsDir() && isOwnedFile(name):
			if err := e.fs.Remove(filepath.Join(e.root, child)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s: %w", child, err)
			}
		default:
			e.opts.Logger.Warn("keeping an entry the engine did not write", "entry", child)
			kept = true
		}
	}
	if kept {
		return nil
	}
	if err := e.fs.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	return nil
}
