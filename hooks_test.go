package fluss

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueryHookAndLogger(t *testing.T) {
	var (
		mu    sync.Mutex
		infos []QueryInfo
		logs  bytes.Buffer
	)
	type ctxKey struct{}
	hook := func(ctx context.Context, info QueryInfo) {
		require.Equal(t, "traced", ctx.Value(ctxKey{}), "the hook gets the statement's context")
		mu.Lock()
		defer mu.Unlock()
		infos = append(infos, info)
	}
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctr, err := NewConnector(":memory:", WithQueryHook(hook), WithLogger(logger))
	require.NoError(t, err)
	db := sql.OpenDB(ctr)
	defer db.Close()
	ctx := context.WithValue(context.Background(), ctxKey{}, "traced")
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	last := func() QueryInfo {
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, infos)
		return infos[len(infos)-1]
	}

	_, err = conn.ExecContext(ctx, "CREATE TABLE t (id BIGINT, s STRING)")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "INSERT INTO t VALUES (?, ?), (?, ?)", 1, "a", 2, "b")
	require.NoError(t, err)
	in := last()
	require.Equal(t, "INSERT INTO t VALUES (?, ?), (?, ?)", in.SQL)
	require.Equal(t, 4, in.Args)
	require.EqualValues(t, 2, in.Rows)
	require.NoError(t, in.Err)
	require.Positive(t, in.Duration)

	// A query is reported when its rows close, with the rows read.
	rows, err := conn.QueryContext(ctx, "SELECT * FROM t")
	require.NoError(t, err)
	mu.Lock()
	n := len(infos)
	mu.Unlock()
	for rows.Next() {
	}
	require.NoError(t, rows.Close())
	mu.Lock()
	require.Len(t, infos, n+1, "exactly one report, at Close")
	mu.Unlock()
	q := last()
	require.Equal(t, "SELECT * FROM t", q.SQL)
	require.EqualValues(t, 2, q.Rows)
	require.NoError(t, q.Err)

	// Errors are reported.
	_, err = conn.ExecContext(ctx, "INSERT INTO missing VALUES (1)")
	require.Error(t, err)
	require.ErrorIs(t, last().Err, ErrNotFound)
	_, err = conn.QueryContext(ctx, "SELECT * FROM missing")
	require.Error(t, err)
	require.ErrorIs(t, last().Err, ErrNotFound)

	// QueryArrow is reported when the reader is released.
	rr, err := QueryArrow(ctx, conn, "SELECT id FROM t WHERE id = 2")
	require.NoError(t, err)
	for rr.Next() {
	}
	rr.Release()
	a := last()
	require.Equal(t, "SELECT id FROM t WHERE id = 2", a.SQL)
	require.EqualValues(t, 1, a.Rows)

	require.Contains(t, logs.String(), `sql="SELECT * FROM t"`)
	require.Contains(t, logs.String(), "rows=2")
}

// Clauses of the MySQL dialect that CREATE TABLE accepts without effect
// are said to the connector's logger.
func TestCreateTableNotesAreLogged(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	ctr, err := NewConnector(":memory:", WithLogger(logger))
	require.NoError(t, err)
	db := sql.OpenDB(ctr)
	defer db.Close()
	_, err = db.Exec("CREATE TABLE `users` (`id` bigint unsigned AUTO_INCREMENT, `email` varchar(191), PRIMARY KEY (`id`), INDEX `idx_users_email` (`email`)) ENGINE=InnoDB")
	require.NoError(t, err)
	require.Contains(t, logs.String(), "CREATE TABLE: ")
	require.Contains(t, logs.String(), "ENGINE=InnoDB")
	// An index is built, not noted.
	require.NotContains(t, logs.String(), "idx_users_email")
}
