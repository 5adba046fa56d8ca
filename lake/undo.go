package lake

import (
	"context"
	"errors"
	"fmt"

	"github.com/flusslite/fluss/metadata"
)

// bucketOf keys a file or tiered offset by partition name and bucket.
type bucketOf struct {
	part   string
	bucket int32
}

// SnapshotFiles returns the files that hold the rows of one committed
// snapshot of a table, in manifest order. For a snapshot that is the
// newest, or whose manifest is not of the undo layout, that is its
// manifest's Files. An older snapshot of the undo layout is read as the
// newest snapshot's files of the buckets it held, followed by the undo
// files of every snapshot after it, oldest first: a primary-key read
// (OpenSorted) takes each key from the oldest undo file holding it, else
// from the data files, and drops the keys an undo file marks absent.
//
// Every manifest after an undo-layout snapshot is needed to read it;
// Expire keeps them while the snapshot is kept.
func (l *Lake) SnapshotFiles(ctx context.Context, tableID, snapshotID int64) ([]metadata.LakeFile, error) {
	m, err := l.Manifest(ctx, tableID, snapshotID)
	if err != nil {
		return nil, err
	}
	if m.Layout != LayoutUndo {
		return m.Files, nil
	}
	if id, ok := l.knownLatest(tableID); ok && id == snapshotID {
		// The common case, the readable snapshot, without listing the
		// snapshots directory on every plan.
		return m.Files, nil
	}
	latest, ok, err := l.LatestManifest(ctx, tableID)
	if err != nil {
		return nil, err
	}
	if !ok || latest.SnapshotID == snapshotID {
		return m.Files, nil
	}
	held := map[bucketOf]bool{}
	for _, f := range m.Files {
		held[bucketOf{f.PartitionName, f.Bucket}] = true
	}
	for _, t := range m.TieredOffsets {
		held[bucketOf{t.PartitionName, t.Bucket}] = true
	}
	var out []metadata.LakeFile
	add := func(files []metadata.LakeFile) {
		for _, f := range files {
			if held[bucketOf{f.PartitionName, f.Bucket}] {
				out = append(out, f)
			}
		}
	}
	add(latest.Files)
	for id := snapshotID + 1; id <= latest.SnapshotID; id++ {
		mj := latest
		if id < latest.SnapshotID {
			if mj, err = l.Manifest(ctx, tableID, id); err != nil {
				if errors.Is(err, metadata.ErrNotFound) {
					// Snapshot ids of a table have no gaps but those Expire
					// made, and it makes none after a kept snapshot.
					return nil, fmt.Errorf("%w: lake: snapshot %d of table %d cannot be read: snapshot %d after it is gone", metadata.ErrCorrupt, snapshotID, tableID, id)
				}
				return nil, err
			}
		}
		if mj.Layout != LayoutUndo {
			return nil, fmt.Errorf("%w: lake: snapshot %d of table %d is followed by snapshot %d of layout %q", metadata.ErrCorrupt, snapshotID, tableID, id, mj.Layout)
		}
		add(mj.Undo)
	}
	return out, nil
}
