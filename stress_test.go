package fluss_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

var stressDuration = flag.Duration("stress.duration", 3*time.Second, "how long TestStress runs its writers")

const (
	stressWriters = 3
	stressSlots   = 8
)

// TestStress runs writers, readers, tiering rounds and KV snapshots
// together on one database. Writer w appends (w, seq) to a log table whose
// bucket key is w, so each writer owns a bucket's order, and upserts
// (w, seq % 8) -> seq into a key table. Every read must see, per writer, a
// prefix of what it wrote: the log rows 0..n-1 with no gap and no
// duplicate, the key table's slots as they were after write n-1, and n at
// least what was acknowledged before the read began. A transaction's two
// scans see the same rows.
func TestStress(t *testing.T) {
	db, _ := openDB(t, "tiering=off&kv.snapshot.interval=0")
	db.SetMaxOpenConns(16)
	for _, q := range []string{
		`CREATE TABLE sl (w BIGINT, seq BIGINT) WITH ('bucket.num' = '4', 'bucket.key' = 'w', 'table.datalake.enabled' = 'true')`,
		`CREATE TABLE sk (w BIGINT, slot BIGINT, seq BIGINT, PRIMARY KEY (w, slot) NOT ENFORCED)
			WITH ('bucket.num' = '3', 'table.datalake.enabled' = 'true')`,
	} {
		mustExec(t, db, q)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked [stressWriters]atomic.Int64
	var stats struct{ writes, reads, txReads, tiers, snapshots atomic.Int64 }
	var wg sync.WaitGroup
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		cancel()
	}
	// loop runs f until the context ends; an error there is a failure
	// unless it is the end itself.
	loop := func(name string, f func() error) {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := f(); err != nil && ctx.Err() == nil {
					fail("%s: %v", name, err)
					return
				}
			}
		})
	}
	for w := range stressWriters {
		seq := int64(0)
		loop(fmt.Sprintf("writer %d", w), func() error {
			if _, err := db.Exec(`INSERT INTO sl VALUES (?, ?)`, w, seq); err != nil {
				return err
			}
			if _, err := db.Exec(`INSERT INTO sk VALUES (?, ?, ?)`, w, seq%stressSlots, seq); err != nil {
				return err
			}
			seq++
			acked[w].Store(seq)
			stats.writes.Add(1)
			return nil
		})
	}
	snapshotAcked := func() (out [stressWriters]int64) {
		for w := range out {
			out[w] = acked[w].Load()
		}
		return out
	}
	for r := range 2 {
		loop(fmt.Sprintf("reader %d", r), func() error {
			before := snapshotAcked()
			logRows, err := stressQuery(db, `SELECT w, seq FROM sl`)
			if err != nil {
				return err
			}
			kvRows, err := stressQuery(db, `SELECT w, slot, seq FROM sk`)
			if err != nil {
				return err
			}
			if err := stressCheck(logRows, kvRows, before); err != nil {
				fail("reader %d: %v", r, err)
			}
			stats.reads.Add(1)
			return nil
		})
	}
	txSupported := true
	loop("transaction reader", func() error {
		before := snapshotAcked()
		tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if errors.Is(err, fluss.ErrUnsupported) {
			txSupported = false
			<-ctx.Done()
			return nil
		}
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var scans [2][][]int64
		for i := range scans {
			if scans[i], err = stressQuery(tx, `SELECT w, seq FROM sl`); err != nil {
				return err
			}
			// Give the writers time to commit between the scans.
			time.Sleep(time.Millisecond)
		}
		if !slices.EqualFunc(scans[0], scans[1], slices.Equal) {
			fail("two scans in one transaction differ: %d and %d rows", len(scans[0]), len(scans[1]))
		}
		kvRows, err := stressQuery(tx, `SELECT w, slot, seq FROM sk`)
		if err != nil {
			return err
		}
		if err := stressCheck(scans[0], kvRows, before); err != nil {
			fail("transaction: %v", err)
		}
		stats.txReads.Add(1)
		return tx.Commit()
	})
	loop("tiering", func() error {
		for _, table := range []string{"sl", "sk"} {
			if _, err := db.Exec(`CALL sys.tier('` + table + `')`); err != nil {
				return err
			}
		}
		stats.tiers.Add(1)
		return nil
	})
	loop("KV snapshots", func() error {
		if _, err := db.Exec(`CALL sys.kv_snapshot('sk')`); err != nil {
			return err
		}
		stats.snapshots.Add(1)
		time.Sleep(5 * time.Millisecond)
		return nil
	})

	select {
	case <-time.After(*stressDuration):
	case <-ctx.Done():
	}
	cancel()
	wg.Wait()
	if t.Failed() {
		return
	}
	// At rest, a read sees exactly everything.
	logRows, err := stressQuery(db, `SELECT w, seq FROM sl`)
	require.NoError(t, err)
	kvRows, err := stressQuery(db, `SELECT w, slot, seq FROM sk`)
	require.NoError(t, err)
	final := snapshotAcked()
	require.NoError(t, stressCheck(logRows, kvRows, final))
	require.Len(t, logRows, int(final[0]+final[1]+final[2]))
	require.NotZero(t, stats.reads.Load())
	require.NotZero(t, stats.tiers.Load())
	if !txSupported {
		t.Log("transactions are not supported: the two-scan check was skipped")
	}
	t.Logf("%d writes, %d reads, %d transaction reads, %d tiering rounds, %d KV snapshot rounds",
		stats.writes.Load(), stats.reads.Load(), stats.txReads.Load(), stats.tiers.Load(), stats.snapshots.Load())
}

type stressQuerier interface {
	Query(q string, args ...any) (*sql.Rows, error)
}

// stressQuery returns the rows of q, all BIGINT columns, sorted.
func stressQuery(db stressQuerier, q string) ([][]int64, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]int64
	for rows.Next() {
		r := make([]int64, len(cols))
		ptrs := make([]any, len(cols))
		for i := range r {
			ptrs[i] = &r[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, slices.Compare)
	return out, nil
}

// stressCheck checks that, per writer, the log rows are seq 0..n-1 with
// n >= atLeast, and the key table's slots hold what write n-1 (or a later
// write the log read did not see yet) left.
func stressCheck(logRows, kvRows [][]int64, atLeast [stressWriters]int64) error {
	var n [stressWriters]int64
	for _, r := range logRows {
		w, seq := r[0], r[1]
		if w < 0 || w >= stressWriters {
			return fmt.Errorf("log row %v of no writer", r)
		}
		if seq != n[w] {
			return fmt.Errorf("writer %d: log row seq %d where %d was due (a gap or a duplicate)", w, seq, n[w])
		}
		n[w]++
	}
	for w := range n {
		if n[w] < atLeast[w] {
			return fmt.Errorf("writer %d: read %d log rows, but %d were acknowledged before the read", w, n[w], atLeast[w])
		}
	}
	slots := map[[2]int64]int64{}
	for _, r := range kvRows {
		if _, dup := slots[[2]int64{r[0], r[1]}]; dup {
			return fmt.Errorf("key (%d, %d) read twice", r[0], r[1])
		}
		slots[[2]int64{r[0], r[1]}] = r[2]
	}
	for w := range int64(stressWriters) {
		// The key table is read after the log, so it may be ahead; it
		// is a prefix: its newest seq m fixes every slot.
		m := int64(-1)
		for slot := range int64(stressSlots) {
			if seq, ok := slots[[2]int64{w, slot}]; ok {
				m = max(m, seq)
			}
		}
		if m+1 < atLeast[w] {
			return fmt.Errorf("writer %d: the key table holds seq %d, but %d writes were acknowledged before the read", w, m, atLeast[w])
		}
		for slot := range int64(stressSlots) {
			want, ok := m-((m-slot)%stressSlots+stressSlots)%stressSlots, true
			if want < 0 {
				ok = false
			}
			seq, found := slots[[2]int64{w, slot}]
			if found != ok || (ok && seq != want) {
				return fmt.Errorf("writer %d: slot %d holds %d (found %v) in the state after seq %d, want %d; rows %v", w, slot, seq, found, m, want, kvRows)
			}
		}
	}
	return nil
}
