package fluss_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Through SQL: CREATE TABLE of an auto-partitioned table creates its
// partitions ahead, CALL sys.auto_partition reports a pass, and the DSN's
// check interval is an option of the engine.
func TestAutoPartitionThroughSQL(t *testing.T) {
	db, _ := openDB(t, "auto-partition.check.interval=0")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT, dt STRING) PARTITIONED BY (dt) WITH (
		'table.auto-partition.enabled' = 'true', 'table.auto-partition.time-unit' = 'YEAR',
		'table.auto-partition.time-zone' = 'UTC', 'table.auto-partition.num-precreate' = '2')`)
	year := time.Now().UTC().Year()
	var names []string
	for _, r := range queryAll(t, db, `SHOW PARTITIONS ev`) {
		names = append(names, fmt.Sprint(r...))
	}
	require.Len(t, names, 2)
	require.Contains(t, names[0], fmt.Sprint(year))
	require.Contains(t, names[1], fmt.Sprint(year+1))
	require.Empty(t, queryAll(t, db, `CALL sys.auto_partition('ev')`), "nothing to do a second time")
	mustExec(t, db, `INSERT INTO ev VALUES (1, ?)`, fmt.Sprint(year))
	_, err := db.Exec(`INSERT INTO ev VALUES (2, ?)`, fmt.Sprint(year-8))
	require.ErrorContains(t, err, "past the table's auto-partition retention")

	mustExec(t, db, `CREATE TABLE plain (id BIGINT, dt STRING) PARTITIONED BY (dt)`)
	_, err = db.Exec(`CALL sys.auto_partition('plain')`)
	require.ErrorContains(t, err, "does not have table.auto-partition.enabled = 'true'")
}
