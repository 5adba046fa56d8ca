package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// checkSlotsExact checks what kvIndexTag promises of the slots of every
// UNIQUE index of table: a slot that carries its row carries it as stored
// under the row key it names, and that row holds the slot's value. Slots
// that carry no row (a large row) name a row key; missing slots are
// allowed. It returns how many slots carry their rows.
func checkSlotsExact(t *testing.T, e *Engine, table string) int {
	t.Helper()
	entry, err := e.mu.cat.table(path(table))
	require.NoError(t, err)
	carried := 0
	for _, ix := range entry.indexes {
		if !ix.def.Unique {
			continue
		}
		it, err := e.kv.NewIter(&pebble.IterOptions{LowerBound: ix.prefix, UpperBound: prefixEnd(ix.prefix)})
		require.NoError(t, err)
		for ok := it.First(); ok; ok = it.Next() {
			k, v := it.Key(), it.Value()
			if v[0] != kvSlotRowTag {
				continue // an entry (its key ends with the row key it holds) or a slot of a large row
			}
			rowKey, copied, err := parseSlotValue(v)
			require.NoError(t, err)
			if tb, _ := parseBucketID(rowKey[1:kvPrefixSize]); tb.PartitionID != metadata.NonPartitioned {
				if _, live := entry.partitionByID(tb.PartitionID); !live {
					continue // readers pass over slots of dropped partitions
				}
			}
			stored, closer, err := e.kv.Get(rowKey)
			require.NoError(t, err, "slot %x names row key %x, which holds no row", k, rowKey)
			require.Equal(t, stored, copied, "slot %x carries its row as stored", k)
			closer.Close()
			row, err := decodeRowValue(copied, &entry.Info, entry.types)
			require.NoError(t, err)
			sk, ok, err := ix.slot(ix.valuesOf(row))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, sk, bytes.Clone(k), "the row of slot %x holds the slot's value", k)
			carried++
		}
		require.NoError(t, it.Close())
	}
	return carried
}

// The slots of a UNIQUE index carry their rows and stay exact however the
// rows change, and reads through them equal the model: random commits
// (values moving between rows and buckets, other columns changing, rows
// deleted, duplicates refused), a third of them cut off before their KV
// write so that the next Open replays them, with either changelog image.
func TestUniqueSlotsCarryExactRows(t *testing.T) {
	for _, image := range []string{"FULL", "WAL"} {
		t.Run(image, func(t *testing.T) {
			dir := t.TempDir()
			open := func(cut bool) *Engine {
				e, _ := testEngine(t, dir, func(o *Options) { o.TestingSkipKvApply = cut })
				return e
			}
			e := open(false)
			_, err := e.CreateTable(ctx, metadata.TableDescriptor{
				Path:    path("t"),
				Schema:  metadata.Schema{Columns: pkColumns(), PrimaryKey: []string{"id"}},
				Options: map[string]string{metadata.OptBucketNum: "3", metadata.OptChangelogImage: image},
				Indexes: []metadata.DeclaredIndex{{Name: "un", Columns: []string{"n"}, Unique: true}, {Name: "iname", Columns: []string{"v"}}},
			}, false)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(7, uint64(len(image))))
			model := map[int64][]any{} // id -> row (v, id, n)
			const ids, values = 10, 8
			refused, cut := 0, 0
			for round := range 120 {
				next := map[int64][]any{}
				for id, r := range model {
					next[id] = r
				}
				var writes []Write
				for range 1 + rng.IntN(4) {
					id := int64(rng.IntN(ids))
					if rng.IntN(5) == 0 {
						writes = append(writes, Write{Path: path("t"), Kind: WriteDelete, Rows: [][]any{{nil, id, nil}}})
						delete(next, id)
						continue
					}
					var n any
					if rng.IntN(6) > 0 {
						n = int64(rng.IntN(values))
					}
					row := []any{fmt.Sprintf("v%d", rng.IntN(3)), id, n}
					writes = append(writes, Write{Path: path("t"), Kind: WriteUpsert, Rows: [][]any{row}})
					next[id] = row
				}
				holders := map[int64]int{}
				for _, r := range next {
					if r[2] != nil {
						holders[r[2].(int64)]++
					}
				}
				dup := false
				for _, c := range holders {
					dup = dup || c > 1
				}
				cutThis := rng.IntN(3) == 0
				if cutThis {
					require.NoError(t, e.Close())
					e = open(true)
				}
				_, err := e.Commit(ctx, writes)
				if dup {
					require.ErrorIs(t, err, metadata.ErrConstraint, "round %d", round)
					refused++
				} else {
					require.NoError(t, err, "round %d", round)
					model = next
				}
				if cutThis {
					require.NoError(t, e.Close())
					e = open(false)
					cut++
				}
				checkSlotsExact(t, e, "t")
				info, err := e.TableInfo(ctx, path("t"))
				require.NoError(t, err)
				l, err := NewIndexKeyLookup(&info, "un", nil)
				require.NoError(t, err)
				for n := range int64(values) {
					var want []any
					for _, r := range model {
						if r[2] == n {
							want = []any{r[0], int64(r[1].(int64)), n}
						}
					}
					got, found, err := e.LookupIndexKey(ctx, l, []any{n})
					require.NoError(t, err)
					if want == nil {
						require.False(t, found, "round %d: value %d: %v", round, n, got)
						continue
					}
					require.True(t, found, "round %d: value %d", round, n)
					require.Equal(t, want, got, "round %d: value %d", round, n)
				}
			}
			require.NotZero(t, refused, "some commits were refused as duplicates")
			require.NotZero(t, cut, "some commits were replayed")
			require.NotZero(t, checkSlotsExact(t, e, "t"), "slots carry their rows")
			require.NoError(t, e.Close())
		})
	}
}

// A row larger than maxSlotRow is not carried by its slots, which name
// its key: a lookup reads it with a second Get.
func TestUniqueSlotOfLargeRow(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createIndexed(t, e)
	big := strings.Repeat("x", maxSlotRow)
	upsert(t, e, "t", []any{big, 1, 10}, []any{"small", 2, 20})
	entry, err := e.mu.cat.table(path("t"))
	require.NoError(t, err)
	slotOf := func(n int64) []byte {
		sk, ok, err := entry.indexes[0].slot([]any{n})
		require.NoError(t, err)
		require.True(t, ok)
		v, closer, err := e.kv.Get(sk)
		require.NoError(t, err)
		defer closer.Close()
		return bytes.Clone(v)
	}
	require.Equal(t, byte(kvDataTag), slotOf(10)[0], "the large row's slot names its key")
	require.Equal(t, byte(kvSlotRowTag), slotOf(20)[0], "the small row's slot carries it")
	require.Equal(t, 1, checkSlotsExact(t, e, "t"))
	info, err := e.TableInfo(ctx, path("t"))
	require.NoError(t, err)
	l, err := NewIndexKeyLookup(&info, "un", nil)
	require.NoError(t, err)
	got, found, err := e.LookupIndexKey(ctx, l, []any{int64(10)})
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, []any{big, int64(1), int64(10)}, got)
	// Shrunk, the row is carried again.
	upsert(t, e, "t", []any{"now small", 1, 10})
	require.Equal(t, byte(kvSlotRowTag), slotOf(10)[0])
	require.Equal(t, 2, checkSlotsExact(t, e, "t"))
}

// A slot naming a row of a dropped partition (whose rows went by range,
// its slots not) answers nothing; the value held again in a partition
// created later is found.
func TestUniqueSlotOfDroppedPartition(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	_, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("t"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			col("p", metadata.StringType()), col("id", metadata.IntType()), col("n", metadata.BigIntType()),
		}, PrimaryKey: []string{"p", "id"}},
		PartitionKeys: []string{"p"},
		Options:       map[string]string{metadata.OptBucketNum: "2"},
		Indexes:       []metadata.DeclaredIndex{{Name: "un", Columns: []string{"p", "n"}, Unique: true}},
	}, false)
	require.NoError(t, err)
	for _, p := range []string{"a", "b"} {
		_, err := e.CreatePartition(ctx, path("t"), map[string]string{"p": p}, false)
		require.NoError(t, err)
	}
	upsert(t, e, "t", []any{"a", 1, int64(10)}, []any{"b", 2, int64(20)})
	info, err := e.TableInfo(ctx, path("t"))
	require.NoError(t, err)
	l, err := NewIndexKeyLookup(&info, "un", nil)
	require.NoError(t, err)
	find := func(p string, n int64) []any {
		row, found, err := e.LookupIndexKey(ctx, l, []any{p, n})
		require.NoError(t, err)
		if !found {
			return nil
		}
		return row
	}
	require.Equal(t, []any{"a", int64(1), int64(10)}, find("a", 10))
	require.NoError(t, e.DropPartition(ctx, path("t"), map[string]string{"p": "a"}, false))
	require.Nil(t, find("a", 10), "the row went with its partition")
	require.Equal(t, []any{"b", int64(2), int64(20)}, find("b", 20))
	_, err = e.CreatePartition(ctx, path("t"), map[string]string{"p": "a"}, false)
	require.NoError(t, err)
	require.Nil(t, find("a", 10), "the partition created again does not hold the row")
	upsert(t, e, "t", []any{"a", 3, int64(10)})
	require.Equal(t, []any{"a", int64(3), int64(10)}, find("a", 10))
	require.Equal(t, 2, checkSlotsExact(t, e, "t"))
}

// Resetting a bucket's KV state removes the index entries and slots of
// its rows with them, and only theirs.
func TestResetKvBucketRemovesItsIndexEntries(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createIndexed(t, e)
	var rows [][]any
	for i := range 12 {
		rows = append(rows, []any{"v", i, int64(100 + i)})
	}
	upsert(t, e, "t", rows...)
	entry, err := e.mu.cat.table(path("t"))
	require.NoError(t, err)
	tb := metadata.TableBucket{TableID: entry.Info.TableID, PartitionID: metadata.NonPartitioned, Bucket: 1}
	require.NoError(t, e.resetKvBucket(entry, tb))
	kept := 0
	for i := range 12 {
		row := lookup(t, e, "t", i)
		ids := indexIDs(t, e, "un", int64(100+i))
		_, slot := slotID(t, e, int64(100+i))
		if row == nil {
			require.Empty(t, ids, "row %d went with bucket %d", i, tb.Bucket)
			require.False(t, slot, "the slot of row %d went with its bucket", i)
			continue
		}
		kept++
		require.Equal(t, []int64{int64(i)}, ids)
		require.True(t, slot, "row %d of another bucket keeps its slot", i)
	}
	require.Greater(t, kept, 0)
	require.Less(t, kept, 12)
	checkSlotsExact(t, e, "t")
}
