package fluss_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// The bank: goroutines move random amounts between accounts in
// transactions that read both balances and write both, retrying on
// ErrConflict, while readers sum the balances. First committer wins keeps
// every read's sum the starting total (no lost update, no half transfer),
// and the transfer log, appended in the same transactions, holds each
// committed transfer once and explains every balance. Both hold after a
// reopen. The forUpdate variant reads the balances FOR UPDATE.

const (
	bankAccounts = 100
	bankStart    = 1000
	bankWorkers  = 8
)

func TestBank(t *testing.T)          { runBank(t, false, 4) }
func TestBankForUpdate(t *testing.T) { runBank(t, true, 4) }

// TestBankOneBucket: every transfer writes the one bucket, so commits
// queue behind each other's fsync and are applied in groups.
func TestBankOneBucket(t *testing.T) { runBank(t, false, 1) }

func runBank(t *testing.T, forUpdate bool, buckets int) {
	db, dsn := openDB(t, fmt.Sprintf("default.bucket.number=%d", buckets))
	mustExec(t, db, `CREATE TABLE accounts (id INT, balance BIGINT, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `CREATE TABLE transfers (tid BIGINT, src INT, dst INT, amount BIGINT)`)
	for i := range bankAccounts {
		mustExec(t, db, `INSERT INTO accounts VALUES (?, ?)`, i, bankStart)
	}
	read := `SELECT id, balance FROM accounts WHERE id IN (?, ?)`
	if forUpdate {
		read += ` FOR UPDATE`
	}
	run := 1500 * time.Millisecond
	if testing.Short() {
		run = 300 * time.Millisecond
	}
	deadline := time.Now().Add(run)

	var (
		committed, conflicts atomic.Int64
		failMu               sync.Mutex
		failure              error
	)
	fail := func(err error) {
		failMu.Lock()
		defer failMu.Unlock()
		if failure == nil {
			failure = err
		}
	}
	failed := func() bool {
		failMu.Lock()
		defer failMu.Unlock()
		return failure != nil
	}
	// transfer runs one attempt; conflict reports an ErrConflict.
	transfer := func(tid int64, a, b int, amount int64) (conflict bool, err error) {
		tx, err := db.Begin()
		if err != nil {
			return false, err
		}
		defer tx.Rollback()
		rows, err := tx.Query(read, a, b)
		if err != nil {
			return false, err
		}
		bal := map[int]int64{}
		for rows.Next() {
			var id int
			var v int64
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return false, err
			}
			bal[id] = v
		}
		if err := rows.Close(); err != nil {
			return false, err
		}
		if len(bal) != 2 {
			return false, fmt.Errorf("transfer %d read %d accounts of %d and %d", tid, len(bal), a, b)
		}
		for _, u := range []struct {
			id  int
			bal int64
		}{{a, bal[a] - amount}, {b, bal[b] + amount}} {
			if _, err := tx.Exec(`UPDATE accounts SET balance = ? WHERE id = ?`, u.bal, u.id); err != nil {
				return false, err
			}
		}
		if _, err := tx.Exec(`INSERT INTO transfers VALUES (?, ?, ?, ?)`, tid, a, b, amount); err != nil {
			return false, err
		}
		err = tx.Commit()
		if errors.Is(err, fluss.ErrConflict) {
			return true, nil
		}
		return false, err
	}
	var wg sync.WaitGroup
	for w := range bankWorkers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 17))
			for i := int64(0); time.Now().Before(deadline) && !failed(); i++ {
				tid := int64(w)<<32 | i
				a := rng.IntN(bankAccounts)
				b := (a + 1 + rng.IntN(bankAccounts-1)) % bankAccounts
				amount := 1 + rng.Int64N(50)
				for {
					conflict, err := transfer(tid, a, b, amount)
					if err != nil {
						fail(err)
						return
					}
					if !conflict {
						committed.Add(1)
						break
					}
					conflicts.Add(1)
				}
			}
		})
	}
	// Readers: every sum, of one statement or in a transaction, is the
	// total.
	var reads atomic.Int64
	for r := range 2 {
		wg.Go(func() {
			for time.Now().Before(deadline) && !failed() {
				var q interface {
					QueryRow(string, ...any) *sql.Row
				} = db
				var tx *sql.Tx
				if r == 1 {
					var err error
					if tx, err = db.Begin(); err != nil {
						fail(err)
						return
					}
					q = tx
				}
				var sum, n int64
				err := q.QueryRow(`SELECT SUM(balance), COUNT(*) FROM accounts`).Scan(&sum, &n)
				if tx != nil {
					_ = tx.Rollback()
				}
				if err != nil {
					fail(err)
					return
				}
				if sum != bankAccounts*bankStart || n != bankAccounts {
					fail(fmt.Errorf("a read saw %d accounts summing to %d, want %d summing to %d", n, sum, bankAccounts, bankAccounts*bankStart))
					return
				}
				reads.Add(1)
			}
		})
	}
	wg.Wait()
	require.NoError(t, failure)
	require.Positive(t, committed.Load())
	require.Positive(t, reads.Load())
	t.Logf("%d transfers committed, %d conflicts retried, %d sums read", committed.Load(), conflicts.Load(), reads.Load())

	check := func(db *sql.DB) {
		t.Helper()
		var sum int64
		require.NoError(t, db.QueryRow(`SELECT SUM(balance) FROM accounts`).Scan(&sum))
		require.EqualValues(t, bankAccounts*bankStart, sum)
		var n, distinct int64
		require.NoError(t, db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT tid) FROM transfers`).Scan(&n, &distinct))
		require.Equal(t, committed.Load(), n, "one transfer row per committed transfer")
		require.Equal(t, n, distinct, "no transfer applied twice")
		// Replaying the log from the starting balances gives every
		// balance: each committed transfer moved its amount exactly once.
		want := map[int]int64{}
		for i := range bankAccounts {
			want[i] = bankStart
		}
		rows, err := db.Query(`SELECT src, dst, amount FROM transfers`)
		require.NoError(t, err)
		for rows.Next() {
			var a, b int
			var amount int64
			require.NoError(t, rows.Scan(&a, &b, &amount))
			want[a] -= amount
			want[b] += amount
		}
		require.NoError(t, rows.Close())
		got := map[int]int64{}
		rows, err = db.Query(`SELECT id, balance FROM accounts`)
		require.NoError(t, err)
		for rows.Next() {
			var id int
			var v int64
			require.NoError(t, rows.Scan(&id, &v))
			got[id] = v
		}
		require.NoError(t, rows.Close())
		require.Equal(t, want, got)
	}
	check(db)
	db2 := reopenDB(t, db, dsn)
	check(db2)
}
