package fluss_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// The DSN's log.max-open-files bounds the segment files the engine holds
// open, whatever the number of partitions (issue 15 item 9: one
// descriptor per bucket, forever); a bad value is refused naming it.
func TestDSNMaxOpenFiles(t *testing.T) {
	for _, bad := range []string{"7", "0", "x", "2000000"} {
		_, err := fluss.ParseDSN("db?log.max-open-files=" + bad)
		require.ErrorIs(t, err, fluss.ErrInvalidOption, bad)
		require.ErrorContains(t, err, "log.max-open-files", bad)
	}

	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(ents)
	}
	const limit, partitions = 16, 200
	dir := filepath.Join(t.TempDir(), "db")
	db, err := sql.Open("fluss", fmt.Sprintf("%s?sync=off&log.max-open-files=%d", dir, limit))
	require.NoError(t, err)
	defer db.Close()
	mustExec(t, db, `CREATE TABLE ev (id INT, p STRING) PARTITIONED BY (p)`)
	base := open()
	var values []string
	for i := range partitions {
		values = append(values, fmt.Sprintf("(%d, 'p%03d')", i, i))
	}
	for range 2 {
		mustExec(t, db, `INSERT INTO ev VALUES `+strings.Join(values, ", "))
	}
	require.Equal(t, [][]any{{int64(2 * partitions)}}, queryAll(t, db, `SELECT count(*) FROM ev`))
	// The KV store, the journal and the query's own files hold a few more;
	// without the bound every partition's segment stays open.
	require.Less(t, open()-base, limit+32, "descriptors held past the %d segment files allowed", limit)
}
