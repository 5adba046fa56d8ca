package fluss

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStmtCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newStmtCache(2)
	a, err := c.parse("SELECT 1")
	require.NoError(t, err)
	_, err = c.parse("SELECT 2")
	require.NoError(t, err)
	// Touch "SELECT 1" so "SELECT 2" is the oldest.
	again, err := c.parse("SELECT 1")
	require.NoError(t, err)
	require.Same(t, a, again, "a cached statement is returned as it is")
	_, err = c.parse("SELECT 3")
	require.NoError(t, err)
	require.Equal(t, 2, c.len())
	_, ok := c.get("SELECT 2")
	require.False(t, ok, "the least recently used statement is evicted")
	_, ok = c.get("SELECT 1")
	require.True(t, ok)
	_, ok = c.get("SELECT 3")
	require.True(t, ok)

	_, err = c.parse("SELEC nonsense")
	require.Error(t, err)
	_, ok = c.get("SELEC nonsense")
	require.False(t, ok, "parse errors are not cached")
}

// TestStmtCacheSharedAcrossConnections runs the same cached statement from
// many connections at once: binding must not mutate the shared parse.
func TestStmtCacheSharedAcrossConnections(t *testing.T) {
	ctr, err := NewConnector(":memory:")
	require.NoError(t, err)
	defer ctr.Close()
	ctx := context.Background()
	conn, err := ctr.Connect(ctx)
	require.NoError(t, err)
	defer conn.Close()
	c := conn.(*Conn)
	_, err = c.ExecContext(ctx, "CREATE TABLE t (id BIGINT, s STRING)", nil)
	require.NoError(t, err)
	_, err = c.ExecContext(ctx, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')", nil)
	require.NoError(t, err)

	const q = "SELECT s FROM t WHERE id = ?"
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dc, err := ctr.Connect(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer dc.Close()
			for i := range 20 {
				id := int64((g+i)%3 + 1)
				st, err := dc.(*Conn).PrepareContext(ctx, q)
				if err != nil {
					errs <- err
					return
				}
				rows, err := st.(*Stmt).query(ctx, toArgs(valuesToNamed([]driver.Value{id})))
				if err != nil {
					errs <- err
					return
				}
				dest := make([]driver.Value, 1)
				if err := rows.Next(dest); err != nil {
					errs <- err
					return
				}
				rows.Close()
				if want := string(rune('a' + id - 1)); dest[0] != want {
					errs <- fmt.Errorf("id %d: got %v, want %s", id, dest[0], want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	_, ok := ctr.stmts.get(q)
	require.True(t, ok, "the prepared statement is cached")
}
