package lake

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// Manifest is one committed lake snapshot of a table. It lists every live
// file of the snapshot (not the change since the previous one), so a
// reader needs no other manifest. A Manifest returned by the Lake is
// shared: callers must not modify it.
type Manifest struct {
	SnapshotID int64 `json:"snapshot_id"`
	TableID    int64 `json:"table_id"`
	// Files are the snapshot's data files, ordered by partition name,
	// bucket and path.
	Files []metadata.LakeFile `json:"files"`
	// TieredOffsets hold, per bucket, the offset below which every
	// record of the bucket's log is in the lake.
	TieredOffsets []TieredOffset `json:"tiered_offsets"`
	CommittedAt   time.Time      `json:"committed_at"`
	// Layout is "" when Files hold the snapshot's rows for as long as it
	// is kept (log tables, and primary-key snapshots of an older lake),
	// and LayoutUndo for a primary-key table's snapshot whose Files hold
	// its rows only while it is the newest: a round supersedes them, and
	// the snapshot is read from then on as the newest snapshot's files
	// taken back by the Undo files of every snapshot after it
	// (Lake.SnapshotFiles).
	Layout string `json:"layout,omitempty"`
	// Undo are, per bucket the round rewrote, the files that take the
	// bucket's rows in this snapshot back to the previous snapshot's: the
	// previous version of every key the round changed or removed, and a
	// row whose __offset is UndoAbsent for every key it added. They are
	// sorted by key like data files, and written only for buckets the
	// previous snapshot held.
	Undo []metadata.LakeFile `json:"undo,omitempty"`
}

// LayoutUndo is Manifest.Layout of a snapshot read through undo files once
// a newer one exists.
const LayoutUndo = "undo"

// UndoAbsent is the __offset of an undo row that marks a key the bucket
// did not hold before the round; real offsets are never negative.
const UndoAbsent = math.MinInt64

// TieredOffset is one bucket's tiered offset. A bucket is keyed by
// partition name and bucket; PartitionID is the engine's id of the
// partition when it was tiered (metadata.NonPartitioned without
// partitions), kept because a partition dropped and re-created under the
// same name gets a new id.
type TieredOffset struct {
	PartitionID   int64  `json:"partition_id"`
	PartitionName string `json:"partition_name,omitempty"`
	Bucket        int32  `json:"bucket"`
	Offset        int64  `json:"offset"`
}

// PartitionNames returns the names of the partitions the manifest holds
// files or tiered offsets of, sorted, without "" (no partitions).
func (m Manifest) PartitionNames() []string {
	var out []string
	for _, f := range m.Files {
		out = append(out, f.PartitionName)
	}
	for _, t := range m.TieredOffsets {
		out = append(out, t.PartitionName)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	return out
}

// manifestFormat is written into every manifest so that a future layout
// change is detected rather than misread. Format 2 added the checksum,
// format 3 each file's footer checksum (metadata.LakeFile.FooterCRC32C),
// format 4 the undo layout (Manifest.Layout and Undo), written only by
// snapshots that use it. A reader of an older format refuses the new
// fields, so the number changes with them; format 2 manifests are still
// read, their files' footers bounded (checkFooterThrift) instead of
// checksummed.
const (
	manifestFormat         = 3
	manifestFormatNoFooter = 2
	manifestFormatUndo     = 4
)

// manifestFile is a manifest as stored: JSON, with a CRC-32C (Castagnoli)
// of the file's own bytes in which the checksum's value reads
// manifestNoChecksum. JSON alone cannot tell a flipped digit of an offset
// or row count from the real one, and a reader that trusts such a digit
// reads wrong rows instead of failing.
type manifestFile struct {
	Format   int    `json:"format"`
	Checksum string `json:"crc32c"`
	Manifest
}

const manifestNoChecksum = "00000000"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksumField is how the checksum reads in a manifest's bytes.
func checksumField(value string) []byte { return []byte(`"crc32c": "` + value + `"`) }

// encodeManifest renders m as stored, checksum included.
func encodeManifest(m Manifest) ([]byte, error) {
	if m.Layout != "" {
		return encodeManifestFormat(m, manifestFormatUndo)
	}
	return encodeManifestFormat(m, manifestFormat)
}

func encodeManifestFormat(m Manifest, format int) ([]byte, error) {
	body, err := json.MarshalIndent(manifestFile{Format: format, Checksum: manifestNoChecksum, Manifest: m}, "", " ")
	if err != nil {
		return nil, err
	}
	placeholder := checksumField(manifestNoChecksum)
	at := bytes.Index(body, placeholder)
	if at < 0 {
		return nil, fmt.Errorf("no checksum field in %s", body)
	}
	sum := checksumField(fmt.Sprintf("%08x", crc32.Checksum(body, castagnoli)))
	copy(body[at:], sum)
	return body, nil
}

// decodeManifest parses and checks a stored manifest; every failure
// wraps ErrCorrupt and names the file (rel).
func decodeManifest(rel string, body []byte) (Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var mf manifestFile
	if err := dec.Decode(&mf); err != nil {
		return Manifest{}, fmt.Errorf("%w: lake manifest %s: %v", metadata.ErrCorrupt, rel, err)
	}
	if dec.More() {
		return Manifest{}, fmt.Errorf("%w: lake manifest %s: trailing bytes", metadata.ErrCorrupt, rel)
	}
	if mf.Format != manifestFormat && mf.Format != manifestFormatNoFooter && mf.Format != manifestFormatUndo {
		return Manifest{}, fmt.Errorf("%w: lake manifest %s: unknown format %d", metadata.ErrCorrupt, rel, mf.Format)
	}
	if (mf.Format == manifestFormatUndo) != (mf.Layout != "") {
		return Manifest{}, fmt.Errorf("%w: lake manifest %s: format %d with layout %q", metadata.ErrCorrupt, rel, mf.Format, mf.Layout)
	}
	stored := checksumField(mf.Checksum)
	at := bytes.Index(body, stored)
	if len(mf.Checksum) != len(manifestNoChecksum) || at < 0 {
		return Manifest{}, fmt.Errorf("%w: lake manifest %s: malformed checksum %q", metadata.ErrCorrupt, rel, mf.Checksum)
	}
	blank := bytes.Clone(body)
	copy(blank[at:], checksumField(manifestNoChecksum))
	if got := fmt.Sprintf("%08x", crc32.Checksum(blank, castagnoli)); got != mf.Checksum {
		return Manifest{}, fmt.Errorf("%w: lake manifest %s: checksum %s, computed %s", metadata.ErrCorrupt, rel, mf.Checksum, got)
	}
	if err := mf.validate(); err != nil {
		return Manifest{}, fmt.Errorf("%w: lake manifest %s: %s", metadata.ErrCorrupt, rel, err)
	}
	return mf.Manifest, nil
}

func (m Manifest) validate() error {
	if m.TableID < 0 {
		return fmt.Errorf("table id %d is negative", m.TableID)
	}
	if m.SnapshotID < 1 {
		return fmt.Errorf("snapshot id %d must be at least 1", m.SnapshotID)
	}
	switch m.Layout {
	case "", LayoutUndo:
	default:
		return fmt.Errorf("unknown layout %q", m.Layout)
	}
	if len(m.Undo) > 0 && m.Layout != LayoutUndo {
		return fmt.Errorf("undo files in layout %q", m.Layout)
	}
	seen := make(map[string]bool, len(m.Files)+len(m.Undo))
	prefix := tableDir(m.TableID) + "/data/"
	for i, f := range slices.Concat(m.Files, m.Undo) {
		undo := i >= len(m.Files)
		if !validRelPath(f.Path) || !strings.HasPrefix(f.Path, prefix) || path.Ext(f.Path) != ".parquet" {
			return fmt.Errorf("file path %q is not a data file of table %d", f.Path, m.TableID)
		}
		if IsUndoFile(f.Path) != undo {
			return fmt.Errorf("file %q is listed as an undo file: %t", f.Path, undo)
		}
		if snap, _, _ := fileSnapshotID(f.Path); undo && snap != m.SnapshotID {
			return fmt.Errorf("undo file %q is not of snapshot %d", f.Path, m.SnapshotID)
		}
		if seen[f.Path] {
			return fmt.Errorf("file %q is listed twice", f.Path)
		}
		seen[f.Path] = true
		if f.RowCount < 0 || f.SizeBytes < 0 || f.Bucket < 0 {
			return fmt.Errorf("file %q has a negative row count, size or bucket", f.Path)
		}
		if f.FooterCRC32C != "" && !footerCRCSyntax.MatchString(f.FooterCRC32C) {
			return fmt.Errorf("file %q has a malformed footer checksum %q", f.Path, f.FooterCRC32C)
		}
	}
	type key struct {
		part   string
		bucket int32
	}
	offsets := make(map[key]bool, len(m.TieredOffsets))
	for _, t := range m.TieredOffsets {
		k := key{t.PartitionName, t.Bucket}
		if offsets[k] {
			return fmt.Errorf("bucket %d of partition %q has two tiered offsets", t.Bucket, t.PartitionName)
		}
		offsets[k] = true
		if t.Offset < 0 || t.Bucket < 0 {
			return fmt.Errorf("bucket %d of partition %q has a negative tiered offset or bucket", t.Bucket, t.PartitionName)
		}
	}
	return nil
}

// normalized returns a copy of m with its lists in their canonical order.
func (m Manifest) normalized() Manifest {
	byBucket := func(a, b metadata.LakeFile) int {
		return cmp.Or(cmp.Compare(a.PartitionName, b.PartitionName), cmp.Compare(a.Bucket, b.Bucket), cmp.Compare(a.Path, b.Path))
	}
	m.Files = slices.Clone(m.Files)
	slices.SortFunc(m.Files, byBucket)
	if m.Undo != nil {
		m.Undo = slices.Clone(m.Undo)
		slices.SortFunc(m.Undo, byBucket)
	}
	m.TieredOffsets = slices.Clone(m.TieredOffsets)
	slices.SortFunc(m.TieredOffsets, func(a, b TieredOffset) int {
		return cmp.Or(cmp.Compare(a.PartitionName, b.PartitionName), cmp.Compare(a.Bucket, b.Bucket))
	})
	m.CommittedAt = m.CommittedAt.UTC()
	return m
}

// Commit makes m the table's newest lake snapshot, atomically: the
// manifest is written to a temporary file, synced, renamed into place and
// the directory synced, so a reader (or a reopened engine) sees either the
// whole snapshot or none of it. m.SnapshotID must be greater than the
// latest committed id (ErrExists otherwise). A zero CommittedAt is set to
// now. The files m lists must have been written (FileWriter.Close).
func (l *Lake) Commit(ctx context.Context, m Manifest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.checkOpen(); err != nil {
		return err
	}
	if err := m.validate(); err != nil {
		return fmt.Errorf("%w: lake: commit of table %d: %s", metadata.ErrInvalidValue, m.TableID, err)
	}
	if m.CommittedAt.IsZero() {
		m.CommittedAt = time.Now()
	}
	m = m.normalized()
	body, err := encodeManifest(m)
	if err != nil {
		return fmt.Errorf("lake: encode manifest: %w", err)
	}

	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	latest, ok, err := l.latestID(m.TableID)
	if err != nil {
		return err
	}
	if ok && m.SnapshotID <= latest {
		return fmt.Errorf("%w: lake: snapshot %d of table %d is not newer than the latest snapshot %d",
			metadata.ErrExists, m.SnapshotID, m.TableID, latest)
	}
	dir := l.abs(snapshotsDir(m.TableID))
	if err := l.fs.MkdirAll(dir); err != nil {
		return fmt.Errorf("lake: create %s: %w", dir, err)
	}
	l.removeTemps(dir)
	final := l.abs(path.Join(snapshotsDir(m.TableID), manifestName(m.SnapshotID)))
	tmp := final + ".tmp"
	if err := l.writeFile(tmp, body); err != nil {
		l.fs.Remove(tmp)
		return fmt.Errorf("lake: write manifest of table %d snapshot %d: %w", m.TableID, m.SnapshotID, err)
	}
	if err := l.fs.Rename(tmp, final); err != nil {
		l.fs.Remove(tmp)
		return fmt.Errorf("lake: commit manifest of table %d snapshot %d: %w", m.TableID, m.SnapshotID, err)
	}
	l.setLatest(m.TableID, m.SnapshotID)
	if l.opts.Sync {
		if err := l.fs.SyncDir(dir); err != nil {
			return fmt.Errorf("lake: sync %s: %w", dir, err)
		}
	}
	l.mu.Lock()
	l.mu.manifests[m.TableID] = m
	l.mu.Unlock()
	if err := l.writeFileList(m); err != nil {
		// The snapshot is committed; only outside readers miss the list
		// until the next commit writes it.
		l.opts.Logger.Warn("lake: could not write the file list", "table", m.TableID, "snapshot", m.SnapshotID, "err", err)
	}
	return nil
}

// FileListName is the name, in a table's snapshots directory, of the list
// of its newest snapshot's data files, for engines that read the lake from
// outside (see writeFileList).
const FileListName = "files.csv"

// FileListPath is the path, relative to the lake root, of a table's file
// list.
func FileListPath(tableID int64) string { return path.Join(snapshotsDir(tableID), FileListName) }

// writeFileList writes, beside the manifests, the data files of snapshot
// m, newly committed, as CSV: path (as the file system names it),
// snapshot_id, partition, bucket and rows per file. Reading exactly these
// files reads the snapshot; a glob of the data directory also reads files
// older snapshots kept, which hold superseded rows. It replaces the list
// whole (a temporary file renamed over it).
func (l *Lake) writeFileList(m Manifest) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"path", "snapshot_id", "partition", "bucket", "rows"})
	for _, f := range m.Files {
		w.Write([]string{l.abs(f.Path), strconv.FormatInt(m.SnapshotID, 10), f.PartitionName, strconv.Itoa(int(f.Bucket)), strconv.FormatInt(f.RowCount, 10)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	final := l.abs(FileListPath(m.TableID))
	tmp := final + ".tmp"
	if err := l.writeFile(tmp, []byte(b.String())); err != nil {
		l.fs.Remove(tmp)
		return err
	}
	if err := l.fs.Rename(tmp, final); err != nil {
		l.fs.Remove(tmp)
		return err
	}
	return nil
}

func (l *Lake) writeFile(name string, body []byte) error {
	f, err := l.fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(body); err != nil {
		f.Close()
		return err
	}
	if l.opts.Sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// removeTemps deletes manifests a crashed commit left half-written; they
// were never renamed into place, so no reader ever saw them.
func (l *Lake) removeTemps(dir string) {
	names, err := l.fs.ReadDir(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") && isManifestFile(n) {
			if err := l.fs.Remove(filepath.Join(dir, n)); err == nil {
				l.opts.Logger.Info("lake: removed leftover temporary manifest", "file", n)
			}
		}
	}
}

// snapshotIDs lists the committed snapshot ids of a table, ascending.
// Names that are not "<%020d>.json" (temporary files) are ignored.
func (l *Lake) snapshotIDs(tableID int64) ([]int64, error) {
	names, err := l.fs.ReadDir(l.abs(snapshotsDir(tableID)))
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lake: list snapshots of table %d: %w", tableID, err)
	}
	var ids []int64
	for _, n := range names {
		base, ok := strings.CutSuffix(n, ".json")
		if !ok || len(base) != 20 {
			continue
		}
		id, err := strconv.ParseInt(base, 10, 64)
		if err != nil || id < 1 {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func (l *Lake) latestID(tableID int64) (int64, bool, error) {
	ids, err := l.snapshotIDs(tableID)
	if err != nil || len(ids) == 0 {
		return 0, false, err
	}
	id := ids[len(ids)-1]
	l.setLatest(tableID, id)
	return id, true, nil
}

func (l *Lake) setLatest(tableID, id int64) {
	l.mu.Lock()
	l.mu.latest[tableID] = max(l.mu.latest[tableID], id)
	l.mu.Unlock()
}

// knownLatest returns the newest snapshot id of the table as this lake
// last listed or committed it, without reading the directory.
func (l *Lake) knownLatest(tableID int64) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, ok := l.mu.latest[tableID]
	return id, ok
}

// LatestManifest returns the table's newest committed snapshot; ok is false
// when the table has none (not an error). A corrupt newest manifest is
// ErrCorrupt, never silently replaced by an older one.
func (l *Lake) LatestManifest(ctx context.Context, tableID int64) (Manifest, bool, error) {
	if err := ctx.Err(); err != nil {
		return Manifest{}, false, err
	}
	if err := l.checkOpen(); err != nil {
		return Manifest{}, false, err
	}
	id, ok, err := l.latestID(tableID)
	if err != nil || !ok {
		return Manifest{}, false, err
	}
	m, err := l.Manifest(ctx, tableID, id)
	if err != nil {
		return Manifest{}, false, err
	}
	return m, true, nil
}

// Manifest returns one committed snapshot of a table; an unknown id is
// ErrNotFound, a manifest that fails to parse or to validate ErrCorrupt.
func (l *Lake) Manifest(ctx context.Context, tableID, snapshotID int64) (Manifest, error) {
	if err := ctx.Err(); err != nil {
		return Manifest{}, err
	}
	if err := l.checkOpen(); err != nil {
		return Manifest{}, err
	}
	l.mu.Lock()
	cached, ok := l.mu.manifests[tableID]
	l.mu.Unlock()
	if ok && cached.SnapshotID == snapshotID {
		return cached, nil
	}
	rel := path.Join(snapshotsDir(tableID), manifestName(snapshotID))
	m, err := l.readManifest(rel)
	if err != nil {
		return Manifest{}, err
	}
	if m.TableID != tableID || m.SnapshotID != snapshotID {
		return Manifest{}, fmt.Errorf("%w: lake manifest %s is of table %d snapshot %d", metadata.ErrCorrupt, rel, m.TableID, m.SnapshotID)
	}
	l.mu.Lock()
	if cur, ok := l.mu.manifests[tableID]; !ok || cur.SnapshotID < m.SnapshotID {
		l.mu.manifests[tableID] = m
	}
	l.mu.Unlock()
	return m, nil
}

func (l *Lake) readManifest(rel string) (Manifest, error) {
	f, err := l.fs.Open(l.abs(rel))
	if isNotExist(err) {
		return Manifest{}, fmt.Errorf("lake manifest %s: %w", rel, metadata.ErrNotFound)
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("lake: open manifest %s: %w", rel, err)
	}
	defer f.Close()
	body, err := io.ReadAll(f)
	if err != nil {
		return Manifest{}, fmt.Errorf("lake: read manifest %s: %w", rel, err)
	}
	return decodeManifest(rel, body)
}
