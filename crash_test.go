package fluss_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

var (
	crashRounds = flag.Int("crash.rounds", 4, "kill-and-recover rounds of TestCrash")
	crashSeed   = flag.Uint64("crash.seed", 0, "seed of TestCrash (0: from the clock)")
)

// The crash test's child process is this test binary run again with these
// variables set: it writes until it is killed.
const (
	crashChildDir  = "FLUSS_TEST_CRASH_DIR"
	crashChildSeed = "FLUSS_TEST_CRASH_SEED"
	crashChildIDs  = "FLUSS_TEST_CRASH_IDS"
)

// The four tables of the crash test share the columns (k BIGINT, p STRING,
// a BIGINT, b STRING): logp and kvp have partitions that come and go,
// logl and kvl are tiered into the lake (and never lose a partition,
// since a dropped partition stays readable from the lake). The key
// tables index a, which every kind of write changes.
var crashTables = []struct {
	name, ddl string
	pk        bool
	parts     []string
}{
	{"logp", `CREATE TABLE IF NOT EXISTS logp (k BIGINT, p STRING, a BIGINT, b STRING)
		PARTITIONED BY (p) WITH ('bucket.num' = '3')`, false, []string{"p0", "p1", "p2", "p3", "p4"}},
	{"logl", `CREATE TABLE IF NOT EXISTS logl (k BIGINT, p STRING, a BIGINT, b STRING)
		PARTITIONED BY (p) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`, false, []string{"a", "b", "c"}},
	{"kvp", `CREATE TABLE IF NOT EXISTS kvp (k BIGINT, p STRING, a BIGINT, b STRING, PRIMARY KEY (k, p) NOT ENFORCED, KEY ia (a))
		PARTITIONED BY (p) WITH ('bucket.num' = '2')`, true, []string{"p0", "p1", "p2", "p3"}},
	{"kvl", `CREATE TABLE IF NOT EXISTS kvl (k BIGINT, p STRING, a BIGINT, b STRING, PRIMARY KEY (k, p) NOT ENFORCED, KEY ia (a))
		WITH ('bucket.num' = '3', 'table.datalake.enabled' = 'true')`, true, []string{"x", "y"}},
}

// crashRow is a row of any crash table; nil is NULL.
type crashRow struct {
	K int64
	P string
	A *int64  `json:",omitempty"`
	B *string `json:",omitempty"`
}

func (r crashRow) String() string {
	a, b := "NULL", "NULL"
	if r.A != nil {
		a = strconv.FormatInt(*r.A, 10)
	}
	if r.B != nil {
		b = strconv.Quote(*r.B)
	}
	return fmt.Sprintf("(%d, %s, %s, %s)", r.K, r.P, a, b)
}

func (r crashRow) key() string { return fmt.Sprintf("%d/%s", r.K, r.P) }

// crashOp is one operation of the child: one statement, or a transaction
// of several (Sub). Its fields depend on Kind.
type crashOp struct {
	Seq   int
	Kind  string // append upsert partial delete delete-range update copy snapshot tier add-part drop-part tx
	Table string
	Rows  []crashRow `json:",omitempty"` // append, upsert, partial (A only), delete (K and P)
	P     string     `json:",omitempty"` // add-part, drop-part
	Bound int64      `json:",omitempty"` // delete-range: a < Bound; update, copy: k < Bound
	Sub   []crashOp  `json:",omitempty"`
}

type crashStmt struct {
	sql  string
	args []any
}

// statements renders op as SQL; a transaction is the statements of its
// parts.
func (op crashOp) statements() []crashStmt {
	ph := func(n, per int) string {
		one := "(" + strings.TrimSuffix(strings.Repeat("?, ", per), ", ") + ")"
		return strings.TrimSuffix(strings.Repeat(one+", ", n), ", ")
	}
	val := func(r crashRow) (a, b any) {
		if r.A != nil {
			a = *r.A
		}
		if r.B != nil {
			b = *r.B
		}
		return a, b
	}
	switch op.Kind {
	case "append", "upsert":
		var args []any
		for _, r := range op.Rows {
			a, b := val(r)
			args = append(args, r.K, r.P, a, b)
		}
		return []crashStmt{{fmt.Sprintf("INSERT INTO %s VALUES %s", op.Table, ph(len(op.Rows), 4)), args}}
	case "partial":
		var args []any
		for _, r := range op.Rows {
			a, _ := val(r)
			args = append(args, r.K, r.P, a)
		}
		return []crashStmt{{fmt.Sprintf("INSERT INTO %s (k, p, a) VALUES %s", op.Table, ph(len(op.Rows), 3)), args}}
	case "delete":
		var conds []string
		var args []any
		for _, r := range op.Rows {
			conds = append(conds, "(k = ? AND p = ?)")
			args = append(args, r.K, r.P)
		}
		return []crashStmt{{fmt.Sprintf("DELETE FROM %s WHERE %s", op.Table, strings.Join(conds, " OR ")), args}}
	case "delete-range":
		return []crashStmt{{fmt.Sprintf("DELETE FROM %s WHERE a < ?", op.Table), []any{op.Bound}}}
	case "update":
		return []crashStmt{{fmt.Sprintf("UPDATE %s SET a = a + 1 WHERE k < ?", op.Table), []any{op.Bound}}}
	case "copy":
		// The UPDATE above as an upsert of the table's own rows.
		return []crashStmt{{fmt.Sprintf("INSERT INTO %[1]s SELECT k, p, a + 1, b FROM %[1]s WHERE k < ?", op.Table), []any{op.Bound}}}
	case "snapshot":
		return []crashStmt{{fmt.Sprintf("CALL sys.kv_snapshot('%s')", op.Table), nil}}
	case "tier":
		return []crashStmt{{fmt.Sprintf("CALL sys.tier('%s')", op.Table), nil}}
	case "add-part":
		return []crashStmt{{fmt.Sprintf("ALTER TABLE %s ADD IF NOT EXISTS PARTITION (p = '%s')", op.Table, op.P), nil}}
	case "drop-part":
		return []crashStmt{{fmt.Sprintf("ALTER TABLE %s DROP IF EXISTS PARTITION (p = '%s')", op.Table, op.P), nil}}
	case "tx":
		var out []crashStmt
		for _, s := range op.Sub {
			out = append(out, s.statements()...)
		}
		return out
	}
	panic("crash test: unknown op " + op.Kind)
}

// crashGen makes the child's operations from a seed. Log rows get ids
// from a range of their own per round, so no two rows ever share one.
type crashGen struct {
	rng    *rand.Rand
	nextID int64
	seq    int
	tx     bool // the driver has transactions
}

func (g *crashGen) row(table string, k int64) crashRow {
	var parts []string
	for _, t := range crashTables {
		if t.name == table {
			parts = t.parts
		}
	}
	r := crashRow{K: k, P: parts[g.rng.IntN(len(parts))]}
	if g.rng.IntN(8) != 0 {
		a := int64(g.rng.IntN(100))
		r.A = &a
	}
	if g.rng.IntN(8) != 0 {
		b := fmt.Sprintf("s%d", g.rng.IntN(1000))
		r.B = &b
	}
	return r
}

func (g *crashGen) rows(table string, log bool) []crashRow {
	out := make([]crashRow, 1+g.rng.IntN(4))
	seen := map[string]bool{}
	for i := range out {
		if log {
			out[i] = g.row(table, g.nextID)
			g.nextID++
			continue
		}
		// One statement writes a key once: the order of two writes of
		// one key inside a statement is not what this test is about.
		for {
			out[i] = g.row(table, int64(g.rng.IntN(30)))
			if !seen[out[i].key()] {
				seen[out[i].key()] = true
				break
			}
		}
	}
	return out
}

func (g *crashGen) next() crashOp {
	op := g.one(true)
	g.seq++
	op.Seq = g.seq
	return op
}

func (g *crashGen) one(top bool) crashOp {
	kv := []string{"kvp", "kvl"}[g.rng.IntN(2)]
	switch n := g.rng.IntN(100); {
	case n < 18:
		return crashOp{Kind: "append", Table: "logp", Rows: g.rows("logp", true)}
	case n < 32:
		return crashOp{Kind: "append", Table: "logl", Rows: g.rows("logl", true)}
	case n < 50:
		return crashOp{Kind: "upsert", Table: kv, Rows: g.rows(kv, false)}
	case n < 58:
		return crashOp{Kind: "partial", Table: kv, Rows: g.rows(kv, false)}
	case n < 66:
		return crashOp{Kind: "delete", Table: kv, Rows: g.rows(kv, false)}
	case n < 68:
		return crashOp{Kind: "delete-range", Table: kv, Bound: int64(g.rng.IntN(10))}
	case n < 70:
		return crashOp{Kind: "update", Table: kv, Bound: int64(g.rng.IntN(10))}
	case n < 72:
		return crashOp{Kind: "copy", Table: kv, Bound: int64(g.rng.IntN(10))}
	case n < 75 && top:
		return crashOp{Kind: "snapshot", Table: kv}
	case n < 81 && top:
		return crashOp{Kind: "tier", Table: []string{"logl", "kvl"}[g.rng.IntN(2)]}
	case n < 87 && top:
		kind := []string{"add-part", "drop-part"}[g.rng.IntN(2)]
		table := []string{"logp", "kvp"}[g.rng.IntN(2)]
		r := g.row(table, 0)
		return crashOp{Kind: kind, Table: table, P: r.P}
	case n < 95 && top && g.tx:
		// Reads in a transaction see the snapshot taken at Begin, so a
		// DELETE, UPDATE or INSERT ... SELECT (which read) is refused
		// after a write to its table: only the first statement may be
		// one.
		op := crashOp{Kind: "tx", Sub: []crashOp{g.one(false)}}
		for len(op.Sub) < 2+g.rng.IntN(3) {
			if s := g.one(false); s.Kind == "append" || s.Kind == "upsert" || s.Kind == "partial" {
				op.Sub = append(op.Sub, s)
			}
		}
		return op
	}
	return crashOp{Kind: "append", Table: "logp", Rows: g.rows("logp", true)}
}

// crashModel is what the tables must hold: per table, rows by key (the id
// of a log table), and the partitions of the partitioned ones.
type crashModel struct {
	rows  map[string]map[string]crashRow
	parts map[string]map[string]bool
}

func newCrashModel() *crashModel {
	m := &crashModel{rows: map[string]map[string]crashRow{}, parts: map[string]map[string]bool{}}
	for _, t := range crashTables {
		m.rows[t.name] = map[string]crashRow{}
		m.parts[t.name] = map[string]bool{}
	}
	return m
}

func (m *crashModel) clone() *crashModel {
	c := newCrashModel()
	for t, rows := range m.rows {
		for k, r := range rows {
			c.rows[t][k] = r
		}
	}
	for t, parts := range m.parts {
		for p := range parts {
			c.parts[t][p] = true
		}
	}
	return c
}

// partitioned: every crash table but kvl.
func crashPartitioned(table string) bool { return table != "kvl" }

func (m *crashModel) apply(op crashOp) {
	rows := m.rows[op.Table]
	addPart := func(p string) {
		if crashPartitioned(op.Table) {
			m.parts[op.Table][p] = true
		}
	}
	switch op.Kind {
	case "append", "upsert":
		for _, r := range op.Rows {
			rows[r.key()] = r
			addPart(r.P)
		}
	case "partial":
		for _, r := range op.Rows {
			old, ok := rows[r.key()]
			if !ok {
				old = crashRow{K: r.K, P: r.P}
			}
			old.A = r.A
			rows[r.key()] = old
			addPart(r.P)
		}
	case "delete":
		for _, r := range op.Rows {
			delete(rows, r.key())
		}
	case "delete-range":
		for k, r := range rows {
			if r.A != nil && *r.A < op.Bound {
				delete(rows, k)
			}
		}
	case "update", "copy":
		for k, r := range rows {
			if r.K < op.Bound && r.A != nil {
				a := *r.A + 1
				r.A = &a
				rows[k] = r
			}
		}
	case "add-part":
		addPart(op.P)
	case "drop-part":
		delete(m.parts[op.Table], op.P)
		for k, r := range rows {
			if r.P == op.P {
				delete(rows, k)
			}
		}
	case "tx":
		for _, s := range op.Sub {
			m.apply(s)
		}
	}
}

// TestCrash kills a writing child process with SIGKILL at random moments,
// round after round on one directory, and checks after each what the
// directory holds: every acknowledged operation, at most the one in
// flight besides (all of it or none), no row twice, the same rows through
// the lake-union and through the log alone, no row of a dropped
// partition; and that the engine writes and reads on.
func TestCrash(t *testing.T) {
	if dir := os.Getenv(crashChildDir); dir != "" {
		crashChild(dir)
		return
	}
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce with: go test -run '^TestCrash$' -crash.seed=%d -crash.rounds=%d", seed, *crashRounds)
		}
	})
	rng := rand.New(rand.NewPCG(seed, 0x6372617368))
	dir := filepath.Join(t.TempDir(), "db")
	model := newCrashModel()
	parentID := int64(-1)
	var acked, inFlightLanded, ops int
	for round := range *crashRounds {
		roundSeed := rng.Uint64()
		killAfter := 1 + rng.IntN(25)
		delay := time.Duration(rng.IntN(3000)) * time.Microsecond
		done, inFlight := crashRun(t, dir, roundSeed, int64(round+1)*1_000_000, killAfter, delay)
		for _, op := range done {
			model.apply(op)
		}
		acked += len(done)
		ops += len(done)

		db, err := sql.Open("fluss", dir+"?tiering=off")
		require.NoError(t, err)
		state := crashState(t, db)
		without := model
		with := (*crashModel)(nil)
		if inFlight != nil {
			ops++
			with = model.clone()
			with.apply(*inFlight)
			// A write creates its partitions before it writes, as a
			// Fluss client asks the coordinator for them first: a write
			// cut short by the kill may leave them behind, empty.
			without = model.clone()
			for table, parts := range state.parts {
				for p := range parts {
					if with.parts[table][p] && !model.parts[table][p] && inFlight.Kind != "add-part" {
						without.parts[table][p] = true
					}
				}
			}
		}
		switch {
		case crashEqual(state, without):
			model = without
		case with != nil && crashEqual(state, with):
			model = with
			inFlightLanded++
		default:
			msg := fmt.Sprintf("round %d (seed %d): after %d acknowledged ops", round, seed, len(done))
			if inFlight != nil {
				msg += fmt.Sprintf(", with op %+v in flight", *inFlight)
				t.Logf("diff against the model with the op in flight:\n%s", crashDiff(state, with))
			}
			t.Fatalf("%s the state differs from the model:\n%s", msg, crashDiff(state, without))
		}
		crashCheckReads(t, db, model)

		// The engine writes and reads on after recovery.
		a := int64(round)
		r := crashRow{K: parentID, P: "p0", A: &a}
		parentID--
		_, err = db.Exec(`INSERT INTO logp VALUES (?, ?, ?, NULL)`, r.K, r.P, a)
		require.NoError(t, err)
		model.apply(crashOp{Kind: "append", Table: "logp", Rows: []crashRow{r}})
		require.True(t, crashEqual(crashState(t, db), model), "a write after recovery")
		require.NoError(t, db.Close())
	}

	// A last tiering round and KV snapshot after the crashes change no row.
	db, err := sql.Open("fluss", dir+"?tiering=off")
	require.NoError(t, err)
	defer db.Close()
	for _, q := range []string{`CALL sys.tier('logl')`, `CALL sys.tier('kvl')`, `CALL sys.kv_snapshot('kvp')`, `CALL sys.kv_snapshot('kvl')`} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.True(t, crashEqual(crashState(t, db), model), "after a final tiering round")
	crashCheckReads(t, db, model)
	t.Logf("seed %d: %d rounds, %d ops acknowledged, %d in flight at a kill landed", seed, *crashRounds, acked, inFlightLanded)
}

// crashRun starts a child on dir, kills it once it has acknowledged
// killAfter operations and delay has passed, and returns the
// acknowledged operations and the one in flight (begun, not
// acknowledged), if any.
func crashRun(t *testing.T, dir string, seed uint64, firstID int64, killAfter int, delay time.Duration) (done []crashOp, inFlight *crashOp) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		crashChildDir+"="+dir,
		crashChildSeed+"="+strconv.FormatUint(seed, 10),
		crashChildIDs+"="+strconv.FormatInt(firstID, 10))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	r := bufio.NewReader(stdout)
	killed := false
	var begun *crashOp
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			// A line cut short by the kill was never acknowledged.
			require.ErrorIs(t, err, io.EOF)
			break
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "begin "):
			var op crashOp
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "begin ")), &op), line)
			begun = &op
		case strings.HasPrefix(line, "ack "):
			seq, err := strconv.Atoi(strings.TrimPrefix(line, "ack "))
			require.NoError(t, err, line)
			require.True(t, begun != nil && begun.Seq == seq, "ack %d without its begin", seq)
			done = append(done, *begun)
			begun = nil
			if len(done) == killAfter && !killed {
				time.Sleep(delay)
				require.NoError(t, cmd.Process.Kill())
				killed = true
			}
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the child stopped by itself (%v) after %d ops:\n%s", err, len(done), stderr.String())
	}
	return done, begun
}

// crashChild writes to dir until it is killed, printing "begin <op>"
// before and "ack <seq>" after each operation.
func crashChild(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	seed, err := strconv.ParseUint(os.Getenv(crashChildSeed), 10, 64)
	if err != nil {
		fail(err)
	}
	firstID, err := strconv.ParseInt(os.Getenv(crashChildIDs), 10, 64)
	if err != nil {
		fail(err)
	}
	db, err := sql.Open("fluss", dir+"?tiering=off")
	if err != nil {
		fail(err)
	}
	for _, tb := range crashTables {
		if _, err := db.Exec(tb.ddl); err != nil {
			fail(err)
		}
	}
	g := &crashGen{rng: rand.New(rand.NewPCG(seed, 1)), nextID: firstID}
	// Transactions are written only where the driver has them.
	ctx := context.Background()
	if tx, err := db.BeginTx(ctx, nil); err == nil {
		g.tx = true
		_ = tx.Rollback()
	} else if !errors.Is(err, fluss.ErrUnsupported) {
		fail(err)
	}
	// A parent that died leaves no child writing forever.
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		op := g.next()
		b, err := json.Marshal(op)
		if err != nil {
			fail(err)
		}
		os.Stdout.WriteString("begin " + string(b) + "\n")
		if err := crashExec(ctx, db, op); err != nil {
			fail(fmt.Errorf("op %s: %w", b, err))
		}
		os.Stdout.WriteString("ack " + strconv.Itoa(op.Seq) + "\n")
	}
	fail(errors.New("never killed"))
}

func crashExec(ctx context.Context, db *sql.DB, op crashOp) error {
	if op.Kind != "tx" {
		for _, s := range op.statements() {
			if _, err := db.ExecContext(ctx, s.sql, s.args...); err != nil {
				return err
			}
		}
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, s := range op.statements() {
		if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// crashState reads every table and the partitions of the partitioned ones
// into a model, failing on a row read twice.
func crashState(t *testing.T, db *sql.DB) *crashModel {
	t.Helper()
	m := newCrashModel()
	for _, tb := range crashTables {
		for _, r := range crashRows(t, db, "SELECT k, p, a, b FROM "+tb.name) {
			_, dup := m.rows[tb.name][r.key()]
			require.False(t, dup, "%s: row %v read twice", tb.name, r)
			m.rows[tb.name][r.key()] = r
		}
		if crashPartitioned(tb.name) {
			for _, p := range queryAll(t, db, "SHOW PARTITIONS "+tb.name) {
				m.parts[tb.name][p[0].(string)] = true
			}
		}
	}
	return m
}

func crashRows(t *testing.T, db *sql.DB, q string, args ...any) []crashRow {
	t.Helper()
	var out []crashRow
	for _, v := range queryAll(t, db, q, args...) {
		out = append(out, crashRowOf(t, v))
	}
	return out
}

func crashRowOf(t *testing.T, v []any) crashRow {
	t.Helper()
	r := crashRow{K: v[0].(int64), P: v[1].(string)}
	if v[2] != nil {
		a := v[2].(int64)
		r.A = &a
	}
	if v[3] != nil {
		b := v[3].(string)
		r.B = &b
	}
	return r
}

func crashEqual(a, b *crashModel) bool { return crashDiff(a, b) == "" }

// crashDiff describes how got differs from want; "" when it does not.
func crashDiff(got, want *crashModel) string {
	var out []string
	for _, tb := range crashTables {
		g, w := got.rows[tb.name], want.rows[tb.name]
		for k, r := range w {
			if gr, ok := g[k]; !ok {
				out = append(out, fmt.Sprintf("%s: missing %v", tb.name, r))
			} else if gr.String() != r.String() {
				out = append(out, fmt.Sprintf("%s: %v instead of %v", tb.name, gr, r))
			}
		}
		for k, r := range g {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s: extra %v", tb.name, r))
			}
		}
		for p := range want.parts[tb.name] {
			if !got.parts[tb.name][p] {
				out = append(out, fmt.Sprintf("%s: missing partition %s", tb.name, p))
			}
		}
		for p := range got.parts[tb.name] {
			if !want.parts[tb.name][p] {
				out = append(out, fmt.Sprintf("%s: extra partition %s", tb.name, p))
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// crashCheckReads compares the other ways of reading the tables with the
// model: the log alone (`t$changelog`, folded by key for key tables)
// against the lake-union read, the lake snapshot alone, point lookups,
// and partition filters on dropped partitions.
func crashCheckReads(t *testing.T, db *sql.DB, m *crashModel) {
	t.Helper()
	sorted := func(rows map[string]crashRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.String())
		}
		slices.Sort(out)
		return out
	}
	for _, tb := range crashTables {
		want := sorted(m.rows[tb.name])
		// The log alone: every change, in log order per bucket.
		log := map[string]crashRow{}
		last := map[string]int64{}
		for _, v := range queryAll(t, db, "SELECT _change_type, _log_offset, k, p, a, b FROM `"+tb.name+"$changelog`") {
			r, off := crashRowOf(t, v[2:]), v[1].(int64)
			if !tb.pk {
				_, dup := log[r.key()]
				require.False(t, dup, "%s$changelog: row %v twice", tb.name, r)
				log[r.key()] = r
				continue
			}
			if o, ok := last[r.key()]; ok && o > off {
				continue
			}
			last[r.key()] = off
			switch v[0].(string) {
			case "insert", "update_after":
				log[r.key()] = r
			case "delete", "update_before":
				delete(log, r.key())
			default:
				t.Fatalf("%s$changelog: change type %v", tb.name, v[0])
			}
		}
		require.Equal(t, want, sorted(log), "%s: the log alone against the model", tb.name)

		if tb.name == "logl" || tb.name == "kvl" {
			lake := map[string]crashRow{}
			for _, r := range crashRows(t, db, "SELECT k, p, a, b FROM `"+tb.name+"$lake`") {
				_, dup := lake[r.key()]
				require.False(t, dup, "%s$lake: row %v twice", tb.name, r)
				lake[r.key()] = r
				if !tb.pk {
					require.Contains(t, m.rows[tb.name], r.key(), "%s$lake: a row the table does not hold", tb.name)
				}
			}
		}
		if tb.pk {
			for k := range int64(30) {
				for _, p := range tb.parts {
					got := crashRows(t, db, "SELECT k, p, a, b FROM "+tb.name+" WHERE k = ? AND p = ?", k, p)
					if r, ok := m.rows[tb.name][crashRow{K: k, P: p}.key()]; ok {
						require.Len(t, got, 1, "%s: lookup %d/%s", tb.name, k, p)
						require.Equal(t, r.String(), got[0].String(), "%s: lookup %d/%s", tb.name, k, p)
					} else {
						require.Empty(t, got, "%s: lookup %d/%s", tb.name, k, p)
					}
				}
			}
		}
		if tb.pk {
			// Reads through the index of a: every value the model holds,
			// and one it does not.
			values := map[int64]bool{-1: true}
			for _, r := range m.rows[tb.name] {
				if r.A != nil {
					values[*r.A] = true
				}
			}
			for a := range values {
				var want []string
				for _, r := range m.rows[tb.name] {
					if r.A != nil && *r.A == a {
						want = append(want, r.String())
					}
				}
				var got []string
				for _, r := range crashRows(t, db, "SELECT k, p, a, b FROM "+tb.name+" WHERE a = ?", a) {
					got = append(got, r.String())
				}
				slices.Sort(want)
				slices.Sort(got)
				require.Equal(t, want, got, "%s: index lookup a = %d", tb.name, a)
			}
		}
		if crashPartitioned(tb.name) {
			for _, p := range tb.parts {
				if !m.parts[tb.name][p] {
					require.Empty(t, queryAll(t, db, "SELECT k FROM "+tb.name+" WHERE p = ?", p), "%s: rows of dropped partition %s", tb.name, p)
				}
			}
		}
	}
}
