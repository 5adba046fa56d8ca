package fluss_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// Every scalar type takes a constant default, in Fluss's CREATE TABLE; a
// column an INSERT leaves out of a log table's row, or gives as DEFAULT,
// holds it, through Exec and through a prepared statement.
func TestColumnDefaultsPerType(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE d (id INT,
		b BOOLEAN DEFAULT TRUE, ti TINYINT DEFAULT -128, i INT NOT NULL DEFAULT -5, bi BIGINT DEFAULT 9000000000,
		f FLOAT DEFAULT 1.5, db DOUBLE DEFAULT -2.5e3, dec DECIMAL(10, 2) DEFAULT 3.14159, c CHAR(3) DEFAULT 'ab',
		s STRING DEFAULT 'it''s', e STRING DEFAULT '', by BYTES DEFAULT 'xy', dt DATE DEFAULT '2026-01-02',
		tm TIME DEFAULT '10:11:12', ts TIMESTAMP(3) DEFAULT '2026-01-02 03:04:05.678',
		ltz TIMESTAMP_LTZ(0) DEFAULT '2026-01-02 03:04:05', n INT DEFAULT NULL, z INT)`)
	defaults := "true|-128|-5|9000000000|1.5|-2500|3.14|ab|it's||[120 121]|2026-01-02 00:00:00 +0000 UTC|" +
		"1970-01-01 10:11:12 +0000 UTC|2026-01-02 03:04:05.678 +0000 UTC|2026-01-02 03:04:05 +0000 UTC|<nil>"
	mustExec(t, db, `INSERT INTO d (id) VALUES (1)`)
	mustExec(t, db, `INSERT INTO d (id, i, s, z) VALUES (2, DEFAULT, DEFAULT, 7), (3, 8, 'x', DEFAULT)`)
	stmt, err := db.Prepare(`INSERT INTO d (id, z, b) VALUES (?, ?, DEFAULT)`)
	require.NoError(t, err)
	defer stmt.Close()
	for _, id := range []int{4, 5} {
		_, err := stmt.Exec(id, id*10)
		require.NoError(t, err)
	}
	require.Equal(t, []string{
		"1|" + defaults + "|<nil>",
		"2|" + defaults + "|7",
		"3|true|-128|8|9000000000|1.5|-2500|3.14|ab|x||[120 121]|2026-01-02 00:00:00 +0000 UTC|" +
			"1970-01-01 10:11:12 +0000 UTC|2026-01-02 03:04:05.678 +0000 UTC|2026-01-02 03:04:05 +0000 UTC|<nil>|<nil>",
		"4|" + defaults + "|40",
		"5|" + defaults + "|50",
	}, txRows(t, db, `SELECT * FROM d`))

	// A left-out NOT NULL column without a default is refused, naming it;
	// DEFAULT for one is refused too.
	mustExec(t, db, `CREATE TABLE nn (id INT, v INT NOT NULL, w INT NOT NULL DEFAULT 1)`)
	_, err = db.Exec(`INSERT INTO nn (id) VALUES (1)`)
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "column v is NOT NULL, has no default")
	_, err = db.Exec(`INSERT INTO nn VALUES (1, DEFAULT, 2)`)
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "column v: DEFAULT, but the column is NOT NULL and has no default")
	mustExec(t, db, `INSERT INTO nn (id, v) VALUES (1, 2)`)
	mustExec(t, db, `INSERT INTO nn (id, v) SELECT id + 1, v FROM nn`)
	require.Equal(t, []string{"1|2|1", "2|2|1"}, txRows(t, db, `SELECT * FROM nn`))
}

// A default that does not fit its column is refused when the table is
// created, naming the column and the value; so are defaults fluss cannot
// take.
func TestColumnDefaultErrors(t *testing.T) {
	db, _ := openDB(t)
	for _, tc := range []struct{ ddl, want string }{
		{`CREATE TABLE t (a INT DEFAULT 'x')`, `DEFAULT 'x' on column "a"`},
		{`CREATE TABLE t (a TINYINT DEFAULT 300)`, `DEFAULT 300 on column "a": invalid value: value "300" out of range for TINYINT`},
		{`CREATE TABLE t (a INT DEFAULT 1.5)`, `DEFAULT 1.5 on column "a"`},
		{`CREATE TABLE t (a CHAR(2) DEFAULT 'abc')`, `DEFAULT 'abc' on column "a"`},
		{`CREATE TABLE t (a DATE DEFAULT '2026-13-01')`, `DEFAULT '2026-13-01' on column "a"`},
		{`CREATE TABLE t (a BOOLEAN DEFAULT 2)`, `DEFAULT 2 on column "a"`},
		{`CREATE TABLE t (a INT DEFAULT CURRENT_TIMESTAMP)`, `DEFAULT CURRENT_TIMESTAMP on column "a" of type INT`},
		{`CREATE TABLE t (a DATE DEFAULT NOW())`, `DEFAULT CURRENT_TIMESTAMP on column "a" of type DATE`},
		{`CREATE TABLE t (a ARRAY<INT> DEFAULT '1')`, `column "a" of type ARRAY<INT>: a column of a nested type takes no default`},
		{`CREATE TABLE t (a INT DEFAULT 1, PRIMARY KEY (a) NOT ENFORCED)`, `primary-key column "a" takes no DEFAULT`},
		{`CREATE TABLE t (a INT NOT NULL DEFAULT NULL)`, `column a is NOT NULL and its DEFAULT is NULL`},
		{`CREATE TABLE t (a varchar(36) DEFAULT (uuid()))`, `DEFAULT (expression) on column a is not supported`},
		{"CREATE TABLE t (a datetime ON UPDATE CURRENT_TIMESTAMP)", "ON UPDATE on column a is not supported"},
	} {
		_, err := db.Exec(tc.ddl)
		require.Error(t, err, tc.ddl)
		require.ErrorContains(t, err, tc.want, tc.ddl)
		var n int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 't'`).Scan(&n))
		require.Zero(t, n, "no table is left by %s", tc.ddl)
	}
}

// SHOW CREATE TABLE prints the defaults, and the statement it prints
// makes the same table again; DESCRIBE and information_schema.columns show
// them (column_default as MySQL's text); a reopened database keeps them.
func TestColumnDefaultsShownAndKept(t *testing.T) {
	db, dsn := openDB(t)
	mustExec(t, db, "CREATE TABLE `users` (`id` bigint AUTO_INCREMENT, `name` varchar(191) NOT NULL DEFAULT 'it''s me', "+
		"`active` tinyint(1) DEFAULT true, `score` double DEFAULT -1.5, `level` int DEFAULT 3, "+
		"`created_at` datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), `seen` TIMESTAMP_LTZ DEFAULT NOW(), `note` text, PRIMARY KEY (`id`))")
	var name, stmt string
	require.NoError(t, db.QueryRow("SHOW CREATE TABLE users").Scan(&name, &stmt))
	for _, want := range []string{"name STRING NOT NULL DEFAULT 'it''s me'", "active BOOLEAN DEFAULT true", "score DOUBLE DEFAULT -1.5",
		"`level` INT DEFAULT 3", "created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)", "seen TIMESTAMP_LTZ(6) DEFAULT CURRENT_TIMESTAMP", "note STRING,"} {
		require.Contains(t, stmt, want)
	}
	require.Equal(t, []string{
		"active|BOOLEAN|true||true|<nil>",
		"created_at|TIMESTAMP(3)|false||CURRENT_TIMESTAMP(3)|<nil>",
		"id|BIGINT|false|PRI,BUCKET|<nil>|<nil>",
		"level|INT|true||3|<nil>",
		"name|STRING|false||'it''s me'|<nil>",
		"note|STRING|true||<nil>|<nil>",
		"score|DOUBLE|true||-1.5|<nil>",
		"seen|TIMESTAMP_LTZ(6)|true||CURRENT_TIMESTAMP|<nil>",
	}, txRows(t, db, "DESCRIBE users"))
	columnDefaults := func(db *sql.DB) []string {
		return txRows(t, db, `SELECT column_name, column_default, extra FROM information_schema.columns WHERE table_name = 'users'`)
	}
	want := []string{
		"active|1|", "created_at|CURRENT_TIMESTAMP(3)|DEFAULT_GENERATED", "id|<nil>|auto_increment", "level|3|",
		"name|it's me|", "note|<nil>|", "score|-1.5|", "seen|CURRENT_TIMESTAMP|DEFAULT_GENERATED",
	}
	require.Equal(t, want, columnDefaults(db))

	mustExec(t, db, "DROP TABLE users")
	mustExec(t, db, stmt)
	var again string
	require.NoError(t, db.QueryRow("SHOW CREATE TABLE users").Scan(&name, &again))
	require.Equal(t, stmt, again)

	mustExec(t, db, "INSERT INTO users (note) VALUES ('a')")
	require.NoError(t, db.Close())
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.QueryRow("SHOW CREATE TABLE users").Scan(&name, &again))
	require.Equal(t, stmt, again)
	require.Equal(t, want, columnDefaults(db))
	mustExec(t, db, "INSERT INTO users (note) VALUES ('b')")
	require.Equal(t, []string{"a|it's me|true|-1.5|3", "b|it's me|true|-1.5|3"},
		txRows(t, db, "SELECT note, name, active, score, level FROM users"))
}

// DEFAULT CURRENT_TIMESTAMP is the statement's time, one value for all
// its rows: a TIMESTAMP takes the wall clock of the DSN's loc, as MySQL's
// DATETIME shows the session zone's, and a TIMESTAMP_LTZ the instant.
func TestColumnDefaultCurrentTimestamp(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	db, _ := openDB(t, "loc=America/New_York")
	mustExec(t, db, `CREATE TABLE ev (id INT, ts TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP, ltz TIMESTAMP_LTZ(6) DEFAULT NOW(6),
		PRIMARY KEY (id) NOT ENFORCED)`)
	before := time.Now().Truncate(time.Microsecond)
	mustExec(t, db, `INSERT INTO ev (id) VALUES (1), (2), (3)`)
	after := time.Now()
	rows, err := db.Query(`SELECT ts, ltz FROM ev`)
	require.NoError(t, err)
	defer rows.Close()
	var seen []time.Time
	for rows.Next() {
		var ts, ltz time.Time
		require.NoError(t, rows.Scan(&ts, &ltz))
		require.Equal(t, time.UTC, ts.Location(), "a TIMESTAMP is a wall clock")
		wall := time.Date(ts.Year(), ts.Month(), ts.Day(), ts.Hour(), ts.Minute(), ts.Second(), ts.Nanosecond(), ny)
		require.True(t, wall.Equal(ltz), "the TIMESTAMP is New York's wall clock of the LTZ's instant: %v, %v", ts, ltz)
		require.False(t, ltz.Before(before) || ltz.After(after), "%v not in [%v, %v]", ltz, before, after)
		seen = append(seen, ltz)
	}
	require.NoError(t, rows.Err())
	require.Len(t, seen, 3)
	require.True(t, seen[0].Equal(seen[1]) && seen[1].Equal(seen[2]), "one time per statement: %v", seen)

	// A later statement takes a later time; an existing key keeps its own.
	time.Sleep(2 * time.Millisecond)
	mustExec(t, db, `INSERT INTO ev (id) VALUES (1), (4)`)
	var t1, t4 time.Time
	require.NoError(t, db.QueryRow(`SELECT ltz FROM ev WHERE id = 1`).Scan(&t1))
	require.NoError(t, db.QueryRow(`SELECT ltz FROM ev WHERE id = 4`).Scan(&t4))
	require.True(t, t1.Equal(seen[0]), "the existing key keeps its time")
	require.True(t, t4.After(t1))
}

// An INSERT with a column list into a key table: a new key takes the
// defaults of the columns left out (NULL without one), and only a left-out
// NOT NULL column without a default fails it, naming that column; an
// existing key is Fluss's partial update, keeping what is not listed. A
// statement mixing new and existing keys does both, or nothing when one
// of its new keys fails.
func TestInsertColumnListIntoKeyTable(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE transfers (id BIGINT, from_id BIGINT NOT NULL, to_id BIGINT NOT NULL, note STRING,
		status STRING NOT NULL DEFAULT 'new', PRIMARY KEY (id) NOT ENFORCED)`)
	all := func() []string { return txRows(t, db, `SELECT * FROM transfers`) }

	res := mustExec(t, db, `INSERT INTO transfers (id, from_id, to_id) VALUES (1, 10, 20)`)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, []string{"1|10|20|<nil>|new"}, all())

	_, err = db.Exec(`INSERT INTO transfers (id, from_id) VALUES (2, 10)`)
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "column to_id of table fluss.transfers is NOT NULL and has no default")
	require.NotContains(t, err.Error(), "from_id", "the error names the column left out, not one the statement gives")

	mustExec(t, db, `UPDATE transfers SET status = 'done', note = 'n' WHERE id = 1`)
	mustExec(t, db, `INSERT INTO transfers (id, to_id) VALUES (1, 21)`)
	require.Equal(t, []string{"1|10|21|n|done"}, all(), "an existing key keeps what the list leaves out")

	// One failing new key fails the statement; nothing of it is applied.
	_, err = db.Exec(`INSERT INTO transfers (id, to_id) VALUES (1, 22), (3, 30)`)
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "column from_id of table fluss.transfers is NOT NULL")
	require.Equal(t, []string{"1|10|21|n|done"}, all())

	res = mustExec(t, db, `INSERT INTO transfers (id, from_id, to_id) VALUES (1, 11, 22), (4, 40, 41)`)
	n, err = res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.Equal(t, []string{"1|11|22|n|done", "4|40|41|<nil>|new"}, all())

	// DEFAULT sets the default, on an existing key too (MySQL's).
	mustExec(t, db, `INSERT INTO transfers (id, status) VALUES (1, DEFAULT)`)
	mustExec(t, db, `INSERT INTO transfers VALUES (5, 50, 51, NULL, DEFAULT)`)
	require.Equal(t, []string{"1|11|22|n|new", "4|40|41|<nil>|new", "5|50|51|<nil>|new"}, all())

	// A prepared statement goes the same way.
	stmt, err := db.Prepare(`INSERT INTO transfers (id, from_id, note) VALUES (?, ?, ?)`)
	require.NoError(t, err)
	defer stmt.Close()
	_, err = stmt.Exec(4, 42, "p")
	require.NoError(t, err)
	_, err = stmt.Exec(6, 60, "p")
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "column to_id of table fluss.transfers")
	require.Equal(t, []string{"1|11|22|n|new", "4|42|41|p|new", "5|50|51|<nil>|new"}, all())

	// first_row and versioned tables take no partial rows, as in Fluss.
	mustExec(t, db, `CREATE TABLE fr (id INT, v INT DEFAULT 1, w INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'first_row')`)
	_, err = db.Exec(`INSERT INTO fr (id, w) VALUES (1, 2)`)
	require.ErrorIs(t, err, fluss.ErrUnsupported)
}

// Inside a transaction the rule holds at Exec, against the view and the
// transaction's own writes: a new key missing a NOT NULL column fails its
// statement, a key the transaction wrote is an existing one.
func TestInsertColumnListIntoKeyTableInTx(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE acc (id INT, owner STRING NOT NULL, balance BIGINT NOT NULL DEFAULT 0, tag STRING,
		PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO acc VALUES (1, 'ann', 100, 'x')`)
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO acc (id, tag) VALUES (2, 'y')`)
	require.ErrorIs(t, err, fluss.ErrConstraint, "the error comes at Exec, not at Commit")
	require.ErrorContains(t, err, "column owner of table fluss.acc is NOT NULL and has no default")
	_, err = tx.Exec(`INSERT INTO acc (id, owner) VALUES (2, 'bob')`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO acc (id, tag) VALUES (2, 'y'), (1, 'z')`)
	require.NoError(t, err, "key 2 is the transaction's own, key 1 the view's")
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"1|ann|100|z", "2|bob|0|y"}, txRows(t, db, `SELECT * FROM acc`))
}

// UPDATE ... SET col = DEFAULT sets the column's default (the statement's
// time for CURRENT_TIMESTAMP), NULL for a nullable column without one,
// and is refused for a NOT NULL column without one.
func TestUpdateSetDefault(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE u (id INT, status STRING NOT NULL DEFAULT 'new', n INT, m INT NOT NULL,
		at TIMESTAMP_LTZ(6) DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO u VALUES (1, 'done', 5, 6, '2020-01-01 00:00:00'), (2, 'x', 7, 8, '2020-01-01 00:00:00')`)
	before := time.Now().Truncate(time.Microsecond)
	res := mustExec(t, db, `UPDATE u SET status = DEFAULT, n = DEFAULT, at = DEFAULT WHERE id = 1`)
	after := time.Now()
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, []string{"1|new|<nil>|6", "2|x|7|8"}, txRows(t, db, `SELECT id, status, n, m FROM u`))
	var at time.Time
	require.NoError(t, db.QueryRow(`SELECT at FROM u WHERE id = 1`).Scan(&at))
	require.False(t, at.Before(before) || at.After(after), "%v not in [%v, %v]", at, before, after)

	_, err = db.Exec(`UPDATE u SET m = DEFAULT WHERE id = 1`)
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "UPDATE sets NOT NULL column m to DEFAULT, and the column has no default")
	_, err = db.Exec(`UPDATE u SET n = 1 WHERE status = DEFAULT`)
	require.Error(t, err, "DEFAULT is a value of SET alone")

	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`UPDATE u SET status = DEFAULT WHERE id = 2`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"1|new", "2|new"}, txRows(t, db, `SELECT id, status FROM u`))
}
