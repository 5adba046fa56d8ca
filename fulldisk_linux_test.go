package fluss_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fullDiskBytes is the size of the tmpfs TestFullDisk fills, and
// fullDiskFiller what a file beside the database takes of it, so that the
// database runs out of space after a few megabytes and deleting the file
// frees room again.
const (
	fullDiskBytes  = 28 << 20
	fullDiskFiller = 18 << 20
	// fullDiskClose is how long a Close may take on a full disk: the
	// engine gives up on flushing its KV store after a few seconds.
	fullDiskClose = 20 * time.Second
)

// fullDiskModel is what the acknowledged writes of TestFullDisk left: the
// log table's rows by key, and the key table's.
type fullDiskModel struct {
	lg map[int64]string // k -> p + "/" + v
	kv map[int64]string // k -> v + "/" + n
}

// TestFullDisk runs the engine on a real full disk, a small tmpfs: writes
// of every kind until they fail with ENOSPC, Close, a reopen while the
// disk is still full, and a reopen after space is freed. Nothing panics,
// every Close returns within fullDiskClose, and the database holds exactly
// the acknowledged writes. It needs root to mount the tmpfs and skips
// where it cannot.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=%d", fullDiskBytes)); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", mnt, err)
	}
	// Registered after TempDir's own cleanup, so it runs first.
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	filler := filepath.Join(mnt, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, fullDiskFiller), 0o644))
	dsn := filepath.Join(mnt, "db") + "?tiering=off&kv.snapshot.interval=0"

	m := fullDiskModel{lg: map[int64]string{}, kv: map[int64]string{}}
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	mustExec(t, db, `CREATE TABLE lg (k BIGINT, p STRING, v STRING) PARTITIONED BY (p) WITH ('bucket.num' = '2')`)
	mustExec(t, db, `CREATE TABLE kv (k BIGINT, v STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)
		WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`)

	rng := rand.New(rand.NewPCG(15, 5))
	var nextK int64
	fails, kinds := 0, map[string]int{}
	for op := 0; op < 4000 && fails < 40; op++ {
		kind, err := fullDiskOp(db, rng, &m, &nextK, op)
		if err != nil {
			// Refused writes name the cause, also once the engine is
			// read-only.
			require.ErrorContains(t, err, "no space left on device", "op %d (%s)", op, kind)
			fails++
			kinds[kind]++
		}
	}
	require.Positive(t, fails, "the disk never filled up")
	t.Logf("failed writes by kind: %v; %d log rows and %d keys acknowledged", kinds, len(m.lg), len(m.kv))
	closeWithin(t, db, "close on a full disk")

	// Still full: the reopen fails with the error, or opens and reads
	// what was acknowledged.
	if db, err = openWithin(t, dsn); err != nil {
		t.Logf("reopen on a full disk: %v", err)
	} else {
		checkFullDisk(t, db, &m)
		_, err := fullDiskOp(db, rng, &m, &nextK, 0)
		t.Logf("write on a full disk: %v", err)
		closeWithin(t, db, "close of the reopen on a full disk")
	}

	require.NoError(t, os.Remove(filler))
	db, err = openWithin(t, dsn)
	require.NoError(t, err)
	checkFullDisk(t, db, &m)
	for op := range 8 {
		kind, err := fullDiskOp(db, rng, &m, &nextK, op)
		require.NoError(t, err, "%s after space was freed", kind)
	}
	checkFullDisk(t, db, &m)
	require.NoError(t, closeWithin(t, db, "close after space was freed"))

	db, err = openWithin(t, dsn)
	require.NoError(t, err)
	checkFullDisk(t, db, &m)
	require.NoError(t, closeWithin(t, db, "last close"))
}

// fullDiskOp runs one write of TestFullDisk's workload, chosen by op and
// rng, and applies it to m when it is acknowledged.
func fullDiskOp(db *sql.DB, rng *rand.Rand, m *fullDiskModel, nextK *int64, op int) (string, error) {
	pad := strings.Repeat("x", 800+rng.IntN(800))
	switch op % 12 {
	case 0, 1: // appends, a new partition every few rounds
		p := fmt.Sprintf("p%d", op/30)
		var sb strings.Builder
		rows := map[int64]string{}
		for i := range 20 {
			k := *nextK + int64(i)
			if i > 0 {
				sb.WriteString(", ")
			}
			v := fmt.Sprintf("%s%d", pad, k)
			fmt.Fprintf(&sb, "(%d, '%s', '%s')", k, p, v)
			rows[k] = p + "/" + v
		}
		*nextK += 20
		if _, err := db.Exec(`INSERT INTO lg VALUES ` + sb.String()); err != nil {
			return "append", err
		}
		for k, v := range rows {
			m.lg[k] = v
		}
		return "append", nil
	case 2, 3, 4, 8, 9, 10: // upserts
		var sb strings.Builder
		rows := map[int64]string{}
		for i := range 60 {
			k := int64(rng.IntN(6000))
			if _, dup := rows[k]; dup {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteString(", ")
			}
			v := fmt.Sprintf("%s%d", pad, op)
			fmt.Fprintf(&sb, "(%d, '%s', %d)", k, v, i)
			rows[k] = fmt.Sprintf("%s/%d", v, i)
		}
		if _, err := db.Exec(`INSERT INTO kv VALUES ` + sb.String()); err != nil {
			return "upsert", err
		}
		for k, v := range rows {
			m.kv[k] = v
		}
		return "upsert", nil
	case 5: // an update and a delete of key ranges
		lo := int64(rng.IntN(4000))
		if _, err := db.Exec(`UPDATE kv SET n = n + 1 WHERE k >= ? AND k < ?`, lo, lo+40); err != nil {
			return "update", err
		}
		for k, v := range m.kv {
			if k >= lo && k < lo+40 {
				i := strings.LastIndexByte(v, '/')
				var n int64
				fmt.Sscan(v[i+1:], &n)
				m.kv[k] = fmt.Sprintf("%s/%d", v[:i], n+1)
			}
		}
		lo = int64(rng.IntN(4000))
		if _, err := db.Exec(`DELETE FROM kv WHERE k >= ? AND k < ?`, lo, lo+10); err != nil {
			return "delete", err
		}
		for k := range m.kv {
			if k >= lo && k < lo+10 {
				delete(m.kv, k)
			}
		}
		return "update", nil
	case 6: // a transaction over both tables
		tx, err := db.Begin()
		if err != nil {
			return "transaction", err
		}
		k := *nextK
		*nextK++
		v := fmt.Sprintf("%stx%d", pad, k)
		_, err = tx.Exec(`INSERT INTO lg VALUES (?, 'tx', ?)`, k, v)
		if err == nil {
			_, err = tx.Exec(`INSERT INTO kv VALUES (?, ?, 0)`, k, v)
		}
		if err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
		if err != nil {
			return "transaction", err
		}
		m.lg[k] = "tx/" + v
		m.kv[k] = v + "/0"
		return "transaction", nil
	case 7:
		_, err := db.Exec(`CALL sys.kv_snapshot('kv')`)
		return "kv snapshot", err
	default:
		_, err := db.Exec(`CALL sys.tier('kv')`)
		return "tier", err
	}
}

// checkFullDisk requires db to hold exactly m, through a scan of each
// table and point lookups of the key table.
func checkFullDisk(t *testing.T, db *sql.DB, m *fullDiskModel) {
	t.Helper()
	got := map[int64]string{}
	for _, r := range queryAll(t, db, `SELECT k, p, v FROM lg`) {
		k := r[0].(int64)
		require.NotContains(t, got, k, "log row %d twice", k)
		got[k] = fmt.Sprintf("%s/%s", r[1], r[2])
	}
	require.Equal(t, m.lg, got, "log table")
	got = map[int64]string{}
	for _, r := range queryAll(t, db, `SELECT k, v, n FROM kv`) {
		got[r[0].(int64)] = fmt.Sprintf("%s/%d", r[1], r[2])
	}
	require.Equal(t, m.kv, got, "key table")
	n := 0
	for k, want := range m.kv {
		if n++; n > 20 {
			break
		}
		var v string
		var c int64
		require.NoError(t, db.QueryRow(`SELECT v, n FROM kv WHERE k = ?`, k).Scan(&v, &c))
		require.Equal(t, want, fmt.Sprintf("%s/%d", v, c), "lookup of %d", k)
	}
}

// openWithin opens the database of dsn and its engine, failing the test
// when that does not return in time.
func openWithin(t *testing.T, dsn string) (*sql.DB, error) {
	t.Helper()
	type opened struct {
		db  *sql.DB
		err error
	}
	done := make(chan opened, 1)
	go func() {
		db, err := sql.Open("fluss", dsn)
		if err == nil {
			if err = db.Ping(); err != nil {
				db.Close()
			}
		}
		done <- opened{db, err}
	}()
	select {
	case o := <-done:
		return o.db, o.err
	case <-time.After(fullDiskClose):
		t.Fatalf("opening the database did not return within %s", fullDiskClose)
		return nil, nil
	}
}

// closeWithin closes db, failing the test when Close does not return
// within fullDiskClose.
func closeWithin(t *testing.T, db *sql.DB, what string) error {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case err := <-done:
		t.Logf("%s: %v after %s", what, err, time.Since(start).Round(time.Millisecond))
		return err
	case <-time.After(fullDiskClose):
		t.Fatalf("%s did not return within %s", what, fullDiskClose)
		return nil
	}
}
