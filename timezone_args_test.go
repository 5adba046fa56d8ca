package fluss_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A time.Time argument in a zone other than the DSN's loc is moved into
// loc before a TIMESTAMP, DATE or TIME takes its wall clock, as
// go-sql-driver/mysql converts it, so a TIMESTAMP keeps the instant when
// it is read back in loc; a TIMESTAMP_LTZ keeps the instant whatever loc
// is. Writes, predicates and key lookups convert alike, and so does a
// time a driver.Valuer (sql.NullTime) returns.
func TestTimeArgumentsTakeTheWallClockOfLoc(t *testing.T) {
	est := time.FixedZone("EST", -5*3600)
	at := time.Date(2026, 1, 2, 21, 30, 0, 0, est) // 2026-01-03 02:30 UTC
	for _, c := range []struct {
		loc               string
		ts, date, clock   string
		tsReadBackInstant bool
	}{
		{"UTC", "2026-01-03 02:30:00", "2026-01-03", "02:30:00", true},
		{"Asia/Tokyo", "2026-01-03 11:30:00", "2026-01-03", "11:30:00", false},
	} {
		t.Run(c.loc, func(t *testing.T) {
			db, _ := openDB(t, "sync=off&tiering=off&loc="+c.loc)
			_, err := db.Exec(`CREATE TABLE ev (id INT, ts TIMESTAMP(3), d DATE, tm TIME, lt TIMESTAMP_LTZ(3), PRIMARY KEY (id) NOT ENFORCED)`)
			require.NoError(t, err)
			_, err = db.Exec(`INSERT INTO ev VALUES (1, ?, ?, ?, ?)`, at, at, at, at)
			require.NoError(t, err)
			_, err = db.Exec(`INSERT INTO ev VALUES (2, ?, ?, ?, ?)`, sql.NullTime{Time: at, Valid: true}, at, at, at)
			require.NoError(t, err)

			for id := 1; id <= 2; id++ {
				var ts, d, tm string
				var lt time.Time
				require.NoError(t, db.QueryRow(`SELECT CAST(ts AS CHAR), CAST(d AS CHAR), CAST(tm AS CHAR), lt FROM ev WHERE id = ?`, id).Scan(&ts, &d, &tm, &lt))
				require.Equal(t, c.ts+".000", ts, "row %d", id)
				require.Equal(t, c.date, d, "row %d", id)
				require.Equal(t, c.clock, tm, "row %d", id)
				require.True(t, lt.Equal(at), "TIMESTAMP_LTZ keeps the instant: %v", lt)
			}
			var n int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM ev WHERE ts = ? AND d = ? AND tm = ?`, at, at, at).Scan(&n))
			require.Equal(t, 2, n, "a predicate's argument converts as a written one")
			if c.tsReadBackInstant {
				var ts time.Time
				require.NoError(t, db.QueryRow(`SELECT ts FROM ev WHERE id = 1`).Scan(&ts))
				require.True(t, ts.Equal(at), "read in UTC, the TIMESTAMP is the same instant: %v", ts)
			}
		})
	}
}
