package fluss_test

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkTransfer runs the bench harness's T1 bank transfer (two reads
// by key and two UPDATEs by key in one transaction) from one goroutine,
// over 1,000 accounts, with sync=off so that it measures the CPU of a
// transfer rather than the disk's fsync.
//
//	go test -run X -bench BenchmarkTransfer -benchtime 20000x .
func BenchmarkTransfer(b *testing.B) {
	const accounts = 1000
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?tiering=off&sync="+benchSync())
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE acct (id BIGINT, balance BIGINT NOT NULL, PRIMARY KEY (id) NOT ENFORCED)`)
	require.NoError(b, err)
	for i := range accounts {
		_, err := db.Exec(`INSERT INTO acct VALUES (?, 1000)`, i)
		require.NoError(b, err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	b.ResetTimer()
	for range b.N {
		from := rng.Int64N(accounts)
		to := (from + 1 + rng.Int64N(accounts-1)) % accounts
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		var ba, bb int64
		if err := tx.QueryRowContext(ctx, `SELECT balance FROM acct WHERE id = ?`, from).Scan(&ba); err != nil {
			b.Fatal(err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT balance FROM acct WHERE id = ?`, to).Scan(&bb); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE acct SET balance = ? WHERE id = ?`, ba-1, from); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE acct SET balance = ? WHERE id = ?`, bb+1, to); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu0)
	var sum int64
	require.NoError(b, db.QueryRow(`SELECT SUM(balance) FROM acct`).Scan(&sum))
	require.Equal(b, int64(accounts*1000), sum)
}

// benchSync is FLUSS_BENCH_SYNC (on or off), default off.
func benchSync() string {
	if s := os.Getenv("FLUSS_BENCH_SYNC"); s != "" {
		return s
	}
	return "off"
}
