package storage

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestPartialReadOfVerifiedBatches: once a read has checked a large
// batch's CRC, a read that needs only some of its columns reads only
// those, and returns exactly what a whole read does: for plain, zstd and
// LZ4 batches, and for a primary-key table's batches with change types.
func TestPartialReadOfVerifiedBatches(t *testing.T) {
	for _, compression := range []string{"NONE", "ZSTD", "LZ4_FRAME"} {
		t.Run(compression, func(t *testing.T) {
			e, _ := testEngine(t, "", nil)
			opts := map[string]string{"bucket.num": "1", metadata.OptLogCompression: compression}
			info := createTable(t, e, "orders", ordersColumns(), nil, opts)
			// Four batches of 4,000 rows, each above partialReadMin also
			// compressed (the names are random hex).
			rng := rand.New(rand.NewPCG(1, 2))
			for b := range 4 {
				var rows [][]any
				for i := range 4000 {
					id := b*4000 + i
					var name any = fmt.Sprintf("customer-%d-%016x%016x", id, rng.Uint64(), rng.Uint64())
					if id%11 == 0 {
						name = nil
					}
					rows = append(rows, []any{int64(id), name, float64(id) / 3, "2026-01-02"})
				}
				appendRows(t, e, "orders", rows)
			}
			tb := bucket(info, 0)
			for i, proj := range [][]int{{2}, {1, 0}, {3, 2}} {
				// The first read of the batches checks them whole.
				first := int64(4)
				if i == 0 {
					first = 0
				}
				want := readProjected(t, e, tb, proj, first)
				require.Len(t, want, 16000)
				// Later reads take only the projected columns' bytes.
				got := readProjected(t, e, tb, proj, 4)
				require.Equal(t, want, got, "projection %v", proj)
			}
			// All columns: read whole as always.
			require.Len(t, readProjected(t, e, tb, nil, 0), 16000)
		})
	}
	t.Run("changelog", func(t *testing.T) {
		e, _ := testEngine(t, "", nil)
		info := createPK(t, e, "kv", map[string]string{"bucket.num": "1"})
		for round := range 3 {
			var rows [][]any
			for i := range 3000 {
				rows = append(rows, []any{fmt.Sprintf("value-%d-%d-%s", i, round, strings.Repeat("v", i%20)), i, int64(i * round)})
			}
			_, err := e.Upsert(ctx, path("kv"), rows, UpsertOptions{})
			require.NoError(t, err)
		}
		tb := bucket(info, 0)
		want := readProjected(t, e, tb, []int{2}, 0)
		got := readProjected(t, e, tb, []int{2}, 1)
		require.Equal(t, want, got)
	})
}

// readProjected reads the whole bucket with a projection and returns its
// rows with each row's change type; it checks that the read read
// partialWant batches in part (at least that many when partialWant > 0).
func readProjected(t *testing.T, e *Engine, tb metadata.TableBucket, proj []int, partialWant int64) [][]any {
	t.Helper()
	info := tableByID(t, e, tb.TableID)
	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{Projection: proj})
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	cols := proj
	if cols == nil {
		for i := range info.Schema.Columns {
			cols = append(cols, i)
		}
	}
	var out [][]any
	for r.Next() {
		b := r.Batch()
		for i := range int(b.Record.NumRows()) {
			row := []any{metadata.ChangeAppendOnly}
			if b.ChangeTypes != nil {
				row[0] = b.ChangeTypes[i]
			}
			for k, c := range cols {
				row = append(row, metadata.ValueAt(b.Record.Column(k), info.Schema.Columns[c].Type, i))
			}
			out = append(out, row)
		}
	}
	require.NoError(t, r.Err())
	if partialWant == 0 {
		require.Zero(t, r.PartialReads())
	} else {
		require.GreaterOrEqual(t, r.PartialReads(), partialWant)
	}
	return out
}
