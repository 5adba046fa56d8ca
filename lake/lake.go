package lake

import (
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flusslite/fluss/metadata"
)

// Lake is the lake tier of one engine: Parquet files and the manifests of
// committed lake snapshots, per table. It is safe for concurrent use; one
// Lake serves one engine and is closed by it.
type Lake struct {
	opts Options
	fs   FS
	root string

	// commitMu serialises Commit so that "newer than the latest" holds
	// between the check and the rename.
	commitMu sync.Mutex

	mu struct {
		sync.Mutex // guards the fields below
		closed     bool
		// manifests caches the newest manifest read or committed per
		// table; manifests are immutable once committed.
		manifests map[int64]Manifest
		// latest is the newest snapshot id per table, as this lake last
		// listed or committed it: only Commit adds manifests, and Expire
		// never removes the newest.
		latest map[int64]int64
		// fileSeq is the next <n> of a data file name, per directory and
		// snapshot id.
		fileSeq map[string]int
		// swept records, per table, what Expire's last sweep of its data
		// files since the lake opened depended on.
		swept map[int64]sweepState
	}

	// rowGroupsRead counts the Parquet row groups readers decoded; tests
	// use it to prove statistics pruning.
	rowGroupsRead atomic.Int64
}

// Open opens the lake described by opts; nothing is read until a table is
// asked for.
func Open(opts Options) (*Lake, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	l := &Lake{opts: opts, fs: opts.FS, root: opts.Dir}
	switch {
	case l.fs != nil:
	case opts.InMemory:
		l.fs = newMemFS()
		l.root = string(filepath.Separator) + "lake"
	default:
		l.fs = diskFS{}
		if err := l.fs.MkdirAll(l.root); err != nil {
			return nil, fmt.Errorf("lake: create %s: %w", l.root, err)
		}
	}
	if l.root == "" {
		l.root = "lake"
	}
	l.mu.manifests = map[int64]Manifest{}
	l.mu.latest = map[int64]int64{}
	l.mu.fileSeq = map[string]int{}
	l.mu.swept = map[int64]sweepState{}
	return l, nil
}

// Close releases the lake; an in-memory lake's contents are dropped.
// Readers still open must be closed by their owners. Idempotent.
func (l *Lake) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil
	}
	l.mu.closed = true
	l.mu.manifests = map[int64]Manifest{}
	if m, ok := l.fs.(*memFS); ok && l.opts.FS == nil {
		m.mu.Lock()
		m.files = map[string][]byte{}
		m.mu.Unlock()
	}
	return nil
}

func (l *Lake) checkOpen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return fmt.Errorf("lake: %w", metadata.ErrClosed)
	}
	return nil
}

// DropTable removes every file and manifest of a table: what the lake
// wrote, never a file placed there by anyone else (drop.go).
func (l *Lake) DropTable(tableID int64) error {
	if err := l.checkOpen(); err != nil {
		return err
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.mu.Lock()
	delete(l.mu.manifests, tableID)
	delete(l.mu.latest, tableID)
	l.mu.Unlock()
	if _, err := l.removeTableFiles(tableID); err != nil {
		return fmt.Errorf("lake: drop table %d: %w", tableID, err)
	}
	return nil
}

// Layout helpers. Relative paths use '/', as LakeFile.Path does.

func tableDir(tableID int64) string { return strconv.FormatInt(tableID, 10) }

func snapshotsDir(tableID int64) string { return path.Join(tableDir(tableID), "snapshots") }

func manifestName(snapshotID int64) string { return fmt.Sprintf("%020d.json", snapshotID) }

// ManifestPath is the path, relative to the lake root, of a table's
// manifest of one snapshot: what an error about a missing one names.
func ManifestPath(tableID, snapshotID int64) string {
	return path.Join(snapshotsDir(tableID), manifestName(snapshotID))
}

// noPartition names the data directory of a table without partitions.
const noPartition = "-"

func bucketDir(tableID int64, partitionName string, bucket int32) string {
	part := partitionName
	if part == "" {
		part = noPartition
	}
	return path.Join(tableDir(tableID), "data", part, "b"+strconv.Itoa(int(bucket)))
}

// abs turns a relative lake path into a name of the file system.
func (l *Lake) abs(rel string) string { return filepath.Join(l.root, filepath.FromSlash(rel)) }

// validRelPath reports whether p is a clean relative path inside the lake;
// manifests from disk are checked with it before any file is opened.
func validRelPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || path.Clean(p) != p {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." {
			return false
		}
	}
	return true
}

// fileSnapshotID reads <snapshot id> and <n> from a data file name
// "<snapshot id>-<n>.parquet"; ok is false for any other name.
// dataFileName is the name of the n-th data file a tiering round of
// snapshot snap writes into a bucket directory; fileSnapshotID reads it.
func dataFileName(snap int64, n int) string { return fmt.Sprintf("%d-%d.parquet", snap, n) }

// undoFileName names the n-th undo file a round of snapshot snap wrote in
// a bucket (see Manifest.Undo).
func undoFileName(snap int64, n int) string { return fmt.Sprintf("%d-undo-%d.parquet", snap, n) }

// IsUndoFile reports whether a lake path names an undo file.
func IsUndoFile(p string) bool {
	_, _, undo, ok := parseFileName(p)
	return ok && undo
}

// CompareDataFiles orders data file paths as their rounds wrote them: by
// snapshot id, then sequence number, numerically ("9-0" before "10-0").
func CompareDataFiles(a, b string) int {
	as, an, _ := fileSnapshotID(a)
	bs, bn, _ := fileSnapshotID(b)
	return cmp.Or(cmp.Compare(as, bs), cmp.Compare(an, bn), strings.Compare(a, b))
}

func fileSnapshotID(p string) (snap int64, n int, ok bool) {
	snap, n, _, ok = parseFileName(p)
	return snap, n, ok
}

// parseFileName reads the snapshot id and sequence number out of a data
// file's name (<snap>-<n>.parquet) or an undo file's (<snap>-undo-<n>.parquet).
func parseFileName(p string) (snap int64, n int, undo bool, ok bool) {
	base := strings.TrimSuffix(path.Base(p), ".parquet")
	a, b, found := strings.Cut(base, "-")
	if !found {
		return 0, 0, false, false
	}
	b, undo = strings.CutPrefix(b, "undo-")
	s, err1 := strconv.ParseInt(a, 10, 64)
	k, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, false, false
	}
	return s, k, undo, true
}
