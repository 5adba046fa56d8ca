package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flusslite/fluss"
)

// T1 is the bank transfer: a transaction that reads two balances by key,
// writes both back and commits, run from several goroutines at once over
// t1Accounts accounts. Every system runs it with each commit durable when
// it returns (fluss sync=on; SQLite WAL with synchronous=FULL, which
// syncs the WAL at every commit; DuckDB's commit writes its WAL), and
// retries a transfer that loses a conflict: fluss's ErrConflict,
// DuckDB's write-write conflict, SQLite's busy writer.
const (
	t1Accounts = 1000
	t1Balance  = 1000
)

// t1Workers are the goroutine counts T1 runs with.
var t1Workers = []int{1, 4, 16}

// t1Engine is one system's handle on the accounts table.
type t1Engine struct {
	name  string
	db    *sql.DB
	retry func(error) bool
	close func() error
}

func (h *harness) t1(ctx context.Context) {
	rates := map[int]*result{}
	for _, n := range t1Workers {
		rates[n] = h.res(fmt.Sprintf("T1@%d", n), fmt.Sprintf("bank transfer transactions (2 key reads, 2 updates, commit), %d goroutines", n), "tx/s", true)
	}
	// Every system's accounts are set up first; then the runs take turns
	// between the systems, the first of each run going last in the next,
	// so that the disk's fsync latency, which drifts by a fifth over a
	// day on a shared machine, falls on all of them alike.
	var open []*t1Engine
	for _, e := range h.engines {
		te, err := h.openT1(ctx, e)
		if err == nil {
			err = te.setup(ctx)
		}
		if err != nil {
			for _, n := range t1Workers {
				h.record(rates[n], e.name(), 0, err)
			}
			if te != nil {
				_ = te.close()
			}
			continue
		}
		open = append(open, te)
	}
	failed := map[string]bool{}
	for _, n := range t1Workers {
		r := rates[n]
		conflicts, done := map[string]int64{}, map[string]int64{}
		for run := 0; run < h.cfg.runs; run++ {
			for i := range open {
				te := open[(i+run)%len(open)]
				if failed[te.name] {
					continue
				}
				rate, c, d, err := te.transfers(ctx, n, h.cfg.txnTime, uint64(run))
				if err == nil {
					err = te.checkSum(ctx)
				}
				h.record(r, te.name, rate, err)
				if err != nil {
					failed[te.name] = true
					continue
				}
				conflicts[te.name] += c
				done[te.name] += d
			}
		}
		for _, te := range open {
			// A failed run's note says what failed; the rate of
			// retries would hide it.
			if d := done[te.name]; d > 0 && !failed[te.name] {
				r.notes[te.name] = fmt.Sprintf("%.1f%% of attempts retried after a conflict", 100*float64(conflicts[te.name])/float64(conflicts[te.name]+d))
			}
		}
	}
	for _, te := range open {
		if err := te.close(); err != nil {
			h.record(rates[t1Workers[0]], te.name, 0, err)
		}
	}
	for _, n := range t1Workers {
		r := rates[n]
		var parts []string
		for _, e := range h.engines {
			if v, ok := r.median(e.name()); ok {
				parts = append(parts, fmt.Sprintf("%s %s (%s)", e.name(), format(v, r.unit), r.notes[e.name()]))
			}
		}
		fmt.Printf("  T1@%-2d %s\n", n, strings.Join(parts, ", "))
	}
}

// openT1 opens the handle T1 runs on: the engine's own database for
// fluss and DuckDB, a separate SQLite file whose writers take the lock at
// BEGIN and wait for it (without, concurrent transfers fail with
// SQLITE_BUSY rather than wait), syncing every commit.
func (h *harness) openT1(_ context.Context, e engine) (*t1Engine, error) {
	switch e.(type) {
	case *flussEngine:
		return &t1Engine{name: e.name(), db: e.db(), close: func() error { return nil },
			retry: func(err error) bool { return errors.Is(err, fluss.ErrConflict) }}, nil
	case *duckEngine:
		return &t1Engine{name: e.name(), db: e.db(), close: func() error { return nil },
			retry: func(err error) bool {
				s := err.Error()
				return strings.Contains(s, "Conflict") || strings.Contains(s, "conflict")
			}}, nil
	case *sqliteEngine:
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(h.dir, "t1.sqlite")+"?_journal_mode=WAL&_synchronous=FULL&_txlock=immediate&_busy_timeout=10000")
		if err != nil {
			return nil, err
		}
		return &t1Engine{name: e.name(), db: db, close: db.Close,
			retry: func(err error) bool { return strings.Contains(err.Error(), "database is locked") }}, nil
	}
	return nil, na("T1 is not set up for %s", e.name())
}

func (te *t1Engine) setup(ctx context.Context) error {
	ddl := `CREATE TABLE acct (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)`
	if te.name == colFluss {
		ddl = `CREATE TABLE acct (id BIGINT, balance BIGINT NOT NULL, PRIMARY KEY (id) NOT ENFORCED)`
	}
	if _, err := te.db.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("T1 create: %w", err)
	}
	var q strings.Builder
	q.WriteString("INSERT INTO acct VALUES ")
	for i := range t1Accounts {
		if i > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "(%d, %d)", i, t1Balance)
	}
	if _, err := te.db.ExecContext(ctx, q.String()); err != nil {
		return fmt.Errorf("T1 load: %w", err)
	}
	return nil
}

// transfers runs n goroutines moving money for d and returns the
// committed transfers per second, the attempts retried and the transfers
// done.
func (te *t1Engine) transfers(ctx context.Context, n int, d time.Duration, seed uint64) (rate float64, conflicts, done int64, err error) {
	var (
		wg       sync.WaitGroup
		firstErr error
		errOnce  sync.Once
		nDone    atomic.Int64
		nRetry   atomic.Int64
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	deadline := start.Add(d)
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for time.Now().Before(deadline) {
				a := rng.Int64N(t1Accounts)
				b := rng.Int64N(t1Accounts - 1)
				if b >= a {
					b++
				}
				amount := rng.Int64N(10) + 1
				for {
					err := te.transfer(ctx, a, b, amount)
					if err == nil {
						nDone.Add(1)
						break
					}
					if te.retry(err) {
						nRetry.Add(1)
						continue
					}
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if firstErr != nil {
		return 0, 0, 0, fmt.Errorf("T1 with %d goroutines: %w", n, firstErr)
	}
	return float64(nDone.Load()) / el.Seconds(), nRetry.Load(), nDone.Load(), nil
}

// transfer moves amount from account a to account b in one transaction:
// two reads by key, two writes of the balances read.
func (te *t1Engine) transfer(ctx context.Context, a, b, amount int64) (err error) {
	tx, err := te.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var ba, bb int64
	if err = tx.QueryRowContext(ctx, `SELECT balance FROM acct WHERE id = ?`, a).Scan(&ba); err != nil {
		return err
	}
	if err = tx.QueryRowContext(ctx, `SELECT balance FROM acct WHERE id = ?`, b).Scan(&bb); err != nil {
		return err
	}
	if _, err = tx.ExecContext(ctx, `UPDATE acct SET balance = ? WHERE id = ?`, ba-amount, a); err != nil {
		return err
	}
	if _, err = tx.ExecContext(ctx, `UPDATE acct SET balance = ? WHERE id = ?`, bb+amount, b); err != nil {
		return err
	}
	return tx.Commit()
}

// checkSum fails when money was made or lost: a lost update shows here.
func (te *t1Engine) checkSum(ctx context.Context) error {
	var sum, n int64
	if err := te.db.QueryRowContext(ctx, `SELECT SUM(balance), COUNT(*) FROM acct`).Scan(&sum, &n); err != nil {
		return err
	}
	if n != t1Accounts || sum != t1Accounts*t1Balance {
		return fmt.Errorf("T1: %d accounts hold %d after the transfers, want %d accounts holding %d", n, sum, t1Accounts, t1Accounts*t1Balance)
	}
	return nil
}
