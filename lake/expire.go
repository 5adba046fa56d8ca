package lake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"

	"github.com/flusslite/fluss/metadata"
)

// ExpireResult is what Expire removed.
type ExpireResult struct {
	// Snapshots are the ids of the manifests removed, ascending.
	Snapshots []int64
	// Files counts the data files removed, Bytes their sizes.
	Files int
	Bytes int64
}

// Expire removes the table's old snapshots and the data files no
// remaining snapshot needs. It keeps the newest retain snapshots (at
// least one) and every snapshot keep names (the readable one, those read
// views pin), and, for a kept snapshot of the undo layout, every snapshot
// after it (Lake.SnapshotFiles reads through them); it removes the
// manifests of the others, then every data file the lake wrote for the
// table that no remaining snapshot needs, of a round that committed (a
// file whose snapshot id is above the newest manifest's belongs to a
// round still writing and is left).
//
// A remaining snapshot needs the files of its manifest when it is of the
// old layout or the newest, and the undo files of the snapshots after
// it. A snapshot of the undo layout from the oldest one keep names on
// keeps its files too: a query reading a pinned snapshot may have listed
// its files while that snapshot was the newest.
//
// Manifests go first, each removal whole, and files after: a crash at any
// step leaves files no manifest lists, which the next call removes, and
// never a manifest listing a removed file it needs. A remaining manifest
// that cannot be read stops the call before any file is removed: what it
// lists is not known.
func (l *Lake) Expire(ctx context.Context, tableID int64, retain int, keep []int64) (ExpireResult, error) {
	var res ExpireResult
	if err := l.checkOpen(); err != nil {
		return res, err
	}
	if retain < 1 {
		retain = 1
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	ids, err := l.snapshotIDs(tableID)
	if err != nil || len(ids) == 0 {
		return res, err
	}
	latest := ids[len(ids)-1]
	pinned := int64(math.MaxInt64) // the oldest snapshot keep names
	kept := map[int64]Manifest{}
	for i, id := range ids {
		named := slices.Contains(keep, id)
		if named {
			pinned = min(pinned, id)
		}
		if i < len(ids)-retain && !named {
			continue
		}
		m, err := l.Manifest(ctx, tableID, id)
		if err != nil {
			return res, fmt.Errorf("lake: expire snapshots of table %d: %w", tableID, err)
		}
		kept[id] = m
	}
	// The oldest kept snapshot of the undo layout: every snapshot after it
	// stays.
	from := int64(math.MaxInt64)
	for id, m := range kept {
		if m.Layout == LayoutUndo && id < latest {
			from = min(from, id)
		}
	}
	var live []Manifest
	for _, id := range ids {
		m, ok := kept[id]
		if !ok && id > from {
			if m, err = l.Manifest(ctx, tableID, id); err != nil {
				return res, fmt.Errorf("lake: expire snapshots of table %d: %w", tableID, err)
			}
			ok = true
		}
		if ok {
			live = append(live, m)
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		rel := ManifestPath(tableID, id)
		if err := l.fs.Remove(l.abs(rel)); err != nil && !isNotExist(err) {
			return res, fmt.Errorf("lake: expire snapshot %d of table %d: %w", id, tableID, err)
		}
		res.Snapshots = append(res.Snapshots, id)
	}
	state := sweepState{latest: latest, pinned: pinned}
	if len(res.Snapshots) == 0 && l.sweptAt(tableID) == state {
		// Nothing expired, and the files were swept since this lake opened
		// with the same newest snapshot and oldest pin: no file lost the
		// last snapshot needing it (a crash's leftovers are swept by the
		// first call).
		return res, nil
	}
	if len(res.Snapshots) > 0 && l.opts.Sync {
		if err := l.fs.SyncDir(l.abs(snapshotsDir(tableID))); err != nil {
			return res, fmt.Errorf("lake: expire snapshots of table %d: %w", tableID, err)
		}
	}
	needed := map[string]bool{}
	for _, m := range live {
		if m.Layout != LayoutUndo || m.SnapshotID == latest || m.SnapshotID >= pinned {
			for _, f := range m.Files {
				needed[f.Path] = true
			}
		}
		if m.SnapshotID > from {
			for _, f := range m.Undo {
				needed[f.Path] = true
			}
		}
	}
	err = l.eachDataFile(tableID, func(rel string) error {
		snap, _, ok := fileSnapshotID(rel)
		if !ok || snap > latest || needed[rel] {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var size int64
		if f, err := l.fs.Open(l.abs(rel)); err == nil {
			size = f.Size()
			f.Close()
		}
		if err := l.fs.Remove(l.abs(rel)); err != nil && !isNotExist(err) {
			return fmt.Errorf("remove %s: %w", rel, err)
		}
		res.Files++
		res.Bytes += size
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("lake: expire files of table %d: %w", tableID, err)
	}
	l.mu.Lock()
	l.mu.swept[tableID] = state
	l.mu.Unlock()
	return res, nil
}

// sweepState is what a sweep of a table's files depended on besides the
// manifests it removed: the newest snapshot, and the oldest one the
// caller named.
type sweepState struct {
	latest, pinned int64
}

// sweptAt returns the state of the table's last sweep since the lake
// opened (the zero value before one).
func (l *Lake) sweptAt(tableID int64) sweepState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.swept[tableID]
}

// eachDataFile calls f with the relative path of every data file of the
// table, named as the lake names them, in its bucket directories.
func (l *Lake) eachDataFile(tableID int64, f func(rel string) error) error {
	dataRel := path.Join(tableDir(tableID), "data")
	parts, err := l.fs.ReadDir(l.abs(dataRel))
	if isNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dataRel, err)
	}
	for _, p := range parts {
		prel := path.Join(dataRel, p)
		if !l.isDir(prel) {
			continue
		}
		buckets, err := l.fs.ReadDir(l.abs(prel))
		if err != nil {
			return fmt.Errorf("list %s: %w", prel, err)
		}
		for _, b := range buckets {
			brel := path.Join(prel, b)
			if !isBucketDir(b) || !l.isDir(brel) {
				continue
			}
			names, err := l.fs.ReadDir(l.abs(brel))
			if err != nil {
				return fmt.Errorf("list %s: %w", brel, err)
			}
			for _, n := range names {
				if rel := path.Join(brel, n); isDataFile(n) && !l.isDir(rel) {
					if err := f(rel); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// Manifests returns every snapshot the lake keeps of a table, oldest
// first. A manifest removed by Expire while they are listed is skipped.
func (l *Lake) Manifests(ctx context.Context, tableID int64) ([]Manifest, error) {
	if err := l.checkOpen(); err != nil {
		return nil, err
	}
	ids, err := l.snapshotIDs(tableID)
	if err != nil {
		return nil, err
	}
	out := make([]Manifest, 0, len(ids))
	for _, id := range ids {
		m, err := l.Manifest(ctx, tableID, id)
		if errors.Is(err, metadata.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
