package lake

import (
	"context"
	"errors"
	"path"
	"testing"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// FuzzManifest feeds arbitrary bytes to the manifest decoder: it must
// return a manifest that validates or an error wrapping ErrCorrupt, never
// panic.
func FuzzManifest(f *testing.F) {
	valid := `{"snapshot_id":1,"table_id":1,"files":[{"path":"1/data/-/b0/1-0.parquet","bucket":0,"row_count":3,"size_bytes":100}],` +
		`"tiered_offsets":[{"partition_id":-1,"bucket":0,"offset":3}],"committed_at":"2026-01-01T00:00:00Z"}`
	f.Add([]byte(valid))
	// A whole stored manifest of the undo layout, checksum included.
	undo, err := encodeManifest(Manifest{SnapshotID: 1, TableID: 1, Layout: LayoutUndo,
		Files:         []metadata.LakeFile{{Path: "1/data/-/b0/1-0.parquet", RowCount: 3}},
		Undo:          []metadata.LakeFile{{Path: "1/data/-/b0/1-undo-0.parquet", RowCount: 1}},
		TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Offset: 3}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(undo)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"snapshot_id":1,"table_id":1,"files":null}`))
	f.Add([]byte(`{"snapshot_id":-1}`))
	f.Add([]byte(`[`))
	f.Add([]byte{0xff, 0x00})
	f.Fuzz(func(t *testing.T, body []byte) {
		l, err := Open(Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		dir := l.abs(snapshotsDir(1))
		if err := l.fs.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := l.writeFile(path.Join(dir, manifestName(1)), body); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m, err := l.Manifest(ctx, 1, 1)
		if err != nil {
			if !errors.Is(err, metadata.ErrCorrupt) {
				t.Fatalf("manifest %q: error %v does not wrap ErrCorrupt", body, err)
			}
			return
		}
		if m.SnapshotID != 1 || m.TableID != 1 {
			t.Fatalf("manifest %q decoded as table %d snapshot %d", body, m.TableID, m.SnapshotID)
		}
		if _, ok, err := l.LatestManifest(ctx, 1); err != nil || !ok {
			t.Fatalf("latest manifest after a valid one: ok=%v err=%v", ok, err)
		}
	})
}
