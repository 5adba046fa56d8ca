package tiering

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// snapshotRows reads lake snapshot id of a primary-key table the way the
// planner does (Source.Plan, then one sorted read per bucket), filtered
// by filter when it is not nil: one "<partition>/b<bucket> <values>
// @<offset>" per row, sorted.
func (e *env) snapshotRows(info metadata.TableInfo, id int64, filter predicate.P) []string {
	e.t.Helper()
	var filters []predicate.P
	if filter != nil {
		filters = append(filters, filter)
	}
	files, err := e.lk.Source(&info).Plan(bg, id, nil, filters)
	require.NoError(e.t, err)
	byBucket := map[bucketKey][]metadata.LakeFile{}
	for _, f := range files {
		k := bucketKey{f.PartitionName, f.Bucket}
		byBucket[k] = append(byBucket[k], f)
	}
	all := make([]int, len(info.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	out := []string{}
	n := len(info.Schema.Columns)
	for k, fs := range byBucket {
		sr, err := e.lk.OpenSorted(bg, &info, fs, lake.ReadOptions{Projection: all, WithSystemColumns: true, Filter: filter, FilterRows: filter != nil})
		require.NoError(e.t, err)
		for sr.Next() {
			rec, _ := sr.Batch()
			for i := range int(rec.NumRows()) {
				vals := make([]string, n)
				for c, col := range info.Schema.Columns {
					vals[c] = fmt.Sprint(metadata.ValueAt(rec.Column(c), col.Type, i))
				}
				off := metadata.ValueAt(rec.Column(n+1), metadata.BigIntType(), i).(int64)
				out = append(out, fmt.Sprintf("%s/b%d %s @%d", k.partition, k.bucket, strings.Join(vals, ","), off))
			}
		}
		require.NoError(e.t, sr.Err())
		sr.Close()
	}
	slices.Sort(out)
	return out
}

// The rows of every retained snapshot of a key table stay what they were
// when it committed, round after round of random upserts, deletes and
// re-inserts, through reopens, an added column and partitions dropped and
// created again:
// older snapshots are read through the undo files of the rounds after
// them, and only the newest snapshot's data files are kept.
func TestPrimaryKeySnapshotsReadThroughUndo(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("partitioned=%t", partitioned), func(t *testing.T) {
			e := newEnv(t, t.TempDir(), nil, nil)
			cols := pkCols()
			pk := []string{"id"}
			var partKeys []string
			if partitioned {
				cols = append(cols, metadata.Column{Name: "dt", Type: metadata.StringType(), NotNull: true})
				pk = []string{"id", "dt"}
				partKeys = []string{"dt"}
			}
			e.create("k", cols, pk, partKeys, map[string]string{metadata.OptBucketNum: "3", metadata.OptDatalakeRetention: "1000"})
			parts := []string{"p1", "p2"}
			if partitioned {
				for _, p := range parts {
					_, err := e.eng.CreatePartition(bg, tpath("k"), map[string]string{"dt": p}, false)
					require.NoError(t, err)
				}
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(partKeys))))
			added := false // column x, added at round 22
			var x int64
			// row is a row to write: id, v, n, then dt and x where the
			// table has them; key the same for a delete, v, n and x NULL.
			row := func(id int64, v any, n any, part string) []any {
				r := []any{int32(id), v, n}
				if partitioned {
					r = append(r, part)
				}
				if added {
					var xv any
					if v != nil {
						xv = x
					}
					r = append(r, xv)
				}
				return r
			}
			key := func(id int64, part string) []any { return row(id, nil, nil, part) }
			committed := map[int64][]string{}
			filter := &predicate.Leaf{Op: predicate.Lt, Column: 2, Name: "n", Type: metadata.BigIntType(), Literals: []any{int64(500)}}
			committedLow := map[int64][]string{}
			for round := 1; round <= 40; round++ {
				part := parts[rng.IntN(len(parts))]
				x = int64(round % 3)
				if round == 22 {
					// Snapshots committed before read the new column as NULL;
					// undo files on both sides of the change take them back.
					_, err := e.eng.AddColumns(bg, tpath("k"), []metadata.Column{{Name: "x", Type: metadata.BigIntType()}})
					require.NoError(t, err)
					added = true
					for _, states := range []map[int64][]string{committed, committedLow} {
						for sid, rows := range states {
							for i, r := range rows {
								at := strings.LastIndex(r, " @")
								rows[i] = r[:at] + ",<nil>" + r[at:]
							}
							states[sid] = rows
						}
					}
				}
				for range 1 + rng.IntN(30) {
					id := int64(rng.IntN(60))
					if rng.IntN(4) == 0 {
						e.delete("k", key(id, part))
					} else {
						e.upsert("k", row(id, fmt.Sprintf("r%d", round), int64(rng.IntN(1000)), part))
					}
				}
				switch {
				case partitioned && round%13 == 0:
					// Dropped and created again: the new partition's rows merge
					// into the lake files the old one left under its name.
					require.NoError(t, e.eng.DropPartition(bg, tpath("k"), map[string]string{"dt": "p2"}, false))
					_, err := e.eng.CreatePartition(bg, tpath("k"), map[string]string{"dt": "p2"}, false)
					require.NoError(t, err)
					e.upsert("k", row(1, "again", int64(1), "p2"))
				case round%9 == 0:
					_, err := e.eng.TakeKvSnapshots(bg, tpath("k"))
					require.NoError(t, err)
				case round%7 == 0:
					e.reopen()
				}
				id := e.tier("k")
				info := e.info("k")
				if _, done := committed[id]; !done {
					committed[id] = e.snapshotRows(info, id, nil)
					committedLow[id] = e.snapshotRows(info, id, filter)
				}
				if round%5 == 0 || round == 40 {
					for sid, want := range committed {
						require.Equal(t, want, e.snapshotRows(info, sid, nil), "snapshot %d after round %d", sid, round)
						require.Equal(t, committedLow[sid], e.snapshotRows(info, sid, filter), "snapshot %d filtered by %s after round %d", sid, filter, round)
					}
				}
			}
			require.Len(t, e.info("k").Schema.Columns, len(cols)+1, "x was added")
			// Only the newest snapshot's data files are kept; the others
			// are undo files.
			m := e.manifest("k")
			require.Equal(t, lake.LayoutUndo, m.Layout)
			var data int
			for _, p := range lakeFilesOnDisk(t, e) {
				if !lake.IsUndoFile(p) {
					data++
				}
			}
			require.Equal(t, len(m.Files), data, "data files on disk")
		})
	}
}

// lakeFilesOnDisk lists the Parquet files under the env's lake directory.
func lakeFilesOnDisk(t *testing.T, e *env) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(e.dir, "lake"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	return out
}

// A partition dropped and created again whose old bucket was tiered
// empty, and whose new bucket starts from a KV snapshot: the previous
// snapshot held that bucket without rows, so every row the round writes
// gets an absent marker, and the previous snapshot still reads empty
// there.
func TestPrimaryKeyUndoOfBucketTieredEmpty(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	cols := append(pkCols(), metadata.Column{Name: "dt", Type: metadata.StringType(), NotNull: true})
	e.create("k", cols, []string{"id", "dt"}, []string{"dt"}, map[string]string{metadata.OptBucketNum: "2"})
	spec := map[string]string{"dt": "p"}
	_, err := e.eng.CreatePartition(bg, tpath("k"), spec, false)
	require.NoError(t, err)
	e.upsert("k", []any{int32(0), "old", int64(0), "p"})
	require.Equal(t, int64(1), e.tier("k"))
	info := e.info("k")
	first := e.snapshotRows(info, 1, nil)
	require.Len(t, first, 1)
	m1 := e.manifest("k")
	require.Len(t, m1.Files, 1, "one bucket has a file")
	require.Len(t, m1.TieredOffsets, 2, "both buckets are tiered")

	require.NoError(t, e.eng.DropPartition(bg, tpath("k"), spec, false))
	_, err = e.eng.CreatePartition(bg, tpath("k"), spec, false)
	require.NoError(t, err)
	for id := range 10 {
		e.upsert("k", []any{int32(id), "new", int64(id), "p"})
	}
	_, err = e.eng.TakeKvSnapshots(bg, tpath("k"))
	require.NoError(t, err)
	require.Equal(t, int64(2), e.tier("k"))
	m2 := e.manifest("k")
	require.Len(t, m2.Undo, 2, "both buckets were held by snapshot 1")
	second := e.snapshotRows(info, 2, nil)
	require.Len(t, second, 10)
	require.Equal(t, first, e.snapshotRows(info, 1, nil))
}
