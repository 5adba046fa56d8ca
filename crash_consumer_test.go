package fluss_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// The consumer crash test's child is this test binary run again with
// these variables set: it writes and consumes until it is killed.
const (
	consumerChildDir  = "FLUSS_TEST_CONSUMER_DIR"
	consumerChildIDs  = "FLUSS_TEST_CONSUMER_IDS"
	consumerChildSeed = "FLUSS_TEST_CONSUMER_SEED"
)

// consumerDDL are the tables of the consumer crash test: ev, the source,
// a partitioned log table whose partitions appear as rows arrive;
// derived, a log table (a row copied twice stays twice); totals, a key
// table the consumer reads and rewrites per partition; and the
// consumer's offsets.
var consumerDDL = []string{
	`CREATE TABLE IF NOT EXISTS ev (id BIGINT NOT NULL, p STRING, amount BIGINT) PARTITIONED BY (p) WITH ('bucket.num' = '3')`,
	`CREATE TABLE IF NOT EXISTS derived (id BIGINT NOT NULL, p STRING, doubled BIGINT) WITH ('bucket.num' = '2')`,
	`CREATE TABLE IF NOT EXISTS totals (p STRING NOT NULL, n BIGINT, total BIGINT, PRIMARY KEY (p) NOT ENFORCED)`,
	`CREATE TABLE IF NOT EXISTS consumer_offsets (name STRING NOT NULL, offsets STRING, PRIMARY KEY (name) NOT ENFORCED)`,
}

// TestConsumerExactlyOnceUnderKill runs the README's exactly-once recipe
// in a child process that the test kills with SIGKILL at random moments:
// the child writes rows to ev and, per batch a subscription of ev
// returns, writes what it derives (a row per row, the totals per
// partition) and the subscription's offsets in one transaction. Each
// child resumes from the stored offsets. In the end, consumed to the
// last row, every row of ev is derived exactly once.
func TestConsumerExactlyOnceUnderKill(t *testing.T) {
	if dir := os.Getenv(consumerChildDir); dir != "" {
		consumerChild(dir)
		return
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x636f6e73))
	dir := filepath.Join(t.TempDir(), "db")
	const rounds = 8
	batches := 0
	for round := range rounds {
		killAfter := 1 + rng.IntN(40)
		delay := time.Duration(rng.IntN(4000)) * time.Microsecond
		batches += consumerRun(t, dir, rng.Uint64(), int64(round+1)*1_000_000, killAfter, delay)
	}

	db, err := sql.Open("fluss", dir+"?tiering=off")
	require.NoError(t, err)
	defer db.Close()
	var n int64
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM ev`).Scan(&n))
	require.Positive(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for derivedCount(t, db) < n {
		require.NoError(t, consume(ctx, db, 1, nil), "catching up")
	}
	require.Equal(t, n, derivedCount(t, db))

	// Every row of ev once in derived, and the totals match.
	var missing, extra, dup int64
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM ev WHERE id NOT IN (SELECT id FROM derived)`).Scan(&missing))
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM derived WHERE id NOT IN (SELECT id FROM ev)`).Scan(&extra))
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) - COUNT(DISTINCT id) FROM derived`).Scan(&dup))
	require.Zero(t, missing, "rows of ev never derived")
	require.Zero(t, extra, "derived rows of no row of ev")
	require.Zero(t, dup, "rows derived twice")
	var bad int64
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM derived d JOIN ev e ON d.id = e.id WHERE d.doubled <> 2 * e.amount OR d.p <> e.p`).Scan(&bad))
	require.Zero(t, bad)
	want := queryAll(t, db, `SELECT p, COUNT(*), SUM(amount) FROM ev GROUP BY p ORDER BY p`)
	got := queryAll(t, db, `SELECT p, n, total FROM totals ORDER BY p`)
	require.Equal(t, want, got, "the totals count every row once")
	t.Logf("%d rows, %d rounds, %d batches committed before the kills", n, rounds, batches)
}

func derivedCount(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM derived`).Scan(&n))
	return n
}

// consumerRun starts a child on dir and kills it once it has committed
// killAfter batches and delay has passed; it returns the batches the
// child reported committed.
func consumerRun(t *testing.T, dir string, seed uint64, firstID int64, killAfter int, delay time.Duration) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestConsumerExactlyOnceUnderKill$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		consumerChildDir+"="+dir,
		consumerChildSeed+"="+strconv.FormatUint(seed, 10),
		consumerChildIDs+"="+strconv.FormatInt(firstID, 10))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	acked, killed := 0, false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		if line == "committed\n" {
			acked++
			if acked == killAfter && !killed {
				time.Sleep(delay)
				require.NoError(t, cmd.Process.Kill())
				killed = true
			}
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the child stopped by itself (%v) after %d batches:\n%s", err, acked, stderr.String())
	}
	return acked
}

// consumerChild writes rows to ev in small transactions while it consumes
// ev, printing "committed" after each batch it commits, until killed.
func consumerChild(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	seed, err := strconv.ParseUint(os.Getenv(consumerChildSeed), 10, 64)
	if err != nil {
		fail(err)
	}
	id, err := strconv.ParseInt(os.Getenv(consumerChildIDs), 10, 64)
	if err != nil {
		fail(err)
	}
	db, err := sql.Open("fluss", dir+"?tiering=off")
	if err != nil {
		fail(err)
	}
	for _, ddl := range consumerDDL {
		if _, err := db.Exec(ddl); err != nil {
			fail(err)
		}
	}
	// A parent that died leaves no child running forever.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		rng := rand.New(rand.NewPCG(seed, 1))
		for ctx.Err() == nil {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				fail(err)
			}
			for range 1 + rng.IntN(4) {
				p := fmt.Sprintf("p%d", rng.IntN(4))
				if _, err := tx.Exec(`INSERT INTO ev VALUES (?, ?, ?)`, id, p, rng.IntN(1000)); err != nil {
					fail(err)
				}
				id++
			}
			if err := tx.Commit(); err != nil {
				fail(err)
			}
			time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
		}
	}()
	err = consume(ctx, db, -1, func() { os.Stdout.WriteString("committed\n") })
	fail(fmt.Errorf("the consumer stopped: %w", err))
}

// consume resumes the consumer from its stored offsets (ev's earliest
// offsets the first time) and commits up to n batches (n < 0: until ctx
// ends), each with what it derives and the offsets after it in one
// transaction, calling committed after each.
func consume(ctx context.Context, db *sql.DB, n int, committed func()) error {
	opts := fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest}
	var js string
	switch err := db.QueryRowContext(ctx, `SELECT offsets FROM consumer_offsets WHERE name = 'derive'`).Scan(&js); {
	case err == nil:
		o, err := fluss.ParseOffsets([]byte(js))
		if err != nil {
			return err
		}
		opts = fluss.SubscribeOptions{Offsets: o}
	case errors.Is(err, sql.ErrNoRows):
	default:
		return err
	}
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	sub, err := fluss.Subscribe(ctx, c, "ev", opts)
	if err != nil {
		return err
	}
	defer sub.Close()
	for i := 0; n < 0 || i < n; i++ {
		if !sub.Next() {
			return sub.Err()
		}
		if err := deriveBatch(ctx, db, sub); err != nil {
			return err
		}
		if committed != nil {
			committed()
		}
	}
	return nil
}

// deriveBatch writes the derived rows and totals of the current batch and
// the offsets after it in one transaction.
func deriveBatch(ctx context.Context, db *sql.DB, sub *fluss.Subscription) error {
	rec := sub.RecordBatch()
	idx := map[string]int{}
	for i, f := range rec.Schema().Fields() {
		idx[f.Name] = i
	}
	ids := rec.Column(idx["id"]).(*array.Int64)
	parts := rec.Column(idx["p"]).(*array.String)
	amounts := rec.Column(idx["amount"]).(*array.Int64)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	type total struct{ n, sum int64 }
	add := map[string]total{}
	for i := range ids.Len() {
		p := parts.Value(i)
		if _, err := tx.Exec(`INSERT INTO derived VALUES (?, ?, ?)`, ids.Value(i), p, 2*amounts.Value(i)); err != nil {
			return err
		}
		a := add[p]
		a.n++
		a.sum += amounts.Value(i)
		add[p] = a
	}
	for p, a := range add {
		var cur total
		err := tx.QueryRow(`SELECT n, total FROM totals WHERE p = ?`, p).Scan(&cur.n, &cur.sum)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO totals VALUES (?, ?, ?)`, p, cur.n+a.n, cur.sum+a.sum); err != nil {
			return err
		}
	}
	off, err := sub.Offsets()
	if err != nil {
		return err
	}
	b, err := json.Marshal(off)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO consumer_offsets VALUES ('derive', ?)`, string(b)); err != nil {
		return err
	}
	return tx.Commit()
}
