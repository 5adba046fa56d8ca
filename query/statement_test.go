package query

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// fakeTiering records the calls a session makes to the tiering service.
type fakeTiering struct {
	tiered  []metadata.TablePath
	removed int
}

func (f *fakeTiering) Tier(_ context.Context, path metadata.TablePath) (int64, error) {
	f.tiered = append(f.tiered, path)
	return 7, nil
}

func (f *fakeTiering) RemoveDroppedLakes(context.Context) error {
	f.removed++
	return nil
}

// testSession opens an in-memory engine and lake and returns a session
// factory over them, each session in the database the previous one left.
func testSession(t *testing.T, tier Tiering) func() *Session {
	t.Helper()
	opts := storage.DefaultOptions()
	opts.InMemory = true
	opts.KvSnapshotInterval = 0
	eng, err := storage.Open(opts)
	require.NoError(t, err)
	lk, err := lake.Open(lake.Options{InMemory: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, lk.Close())
		require.NoError(t, eng.Close())
	})
	db := metadata.DefaultDatabase
	var last *Session
	return func() *Session {
		if last != nil {
			db = last.Database
		}
		last = NewSession(Session{Engine: eng, Lake: lk, Tiering: tier, Database: db})
		return last
	}
}

func run(t *testing.T, s *Session, text string, args ...sqlplan.Arg) ExecResult {
	t.Helper()
	st, err := sqlplan.Parse(text)
	require.NoError(t, err)
	res, err := s.Run(context.Background(), st, args)
	require.NoError(t, err, text)
	return res
}

// queryRows runs text through Session.Query and renders its rows.
func queryRows(t *testing.T, s *Session, text string) ([]Column, [][]any) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlplan.Parse(text)
	require.NoError(t, err)
	res, err := s.Query(ctx, st, nil)
	require.NoError(t, err, text)
	defer func() { require.NoError(t, res.Close()) }()
	var rows [][]any
	for {
		b, err := res.Next(ctx)
		if errors.Is(err, io.EOF) {
			return res.Columns, rows
		}
		require.NoError(t, err)
		for r := 0; r < b.NumRows(); r++ {
			row := make([]any, len(res.Columns))
			for c, col := range res.Columns {
				row[c] = metadata.ValueAt(b.Rec.Column(c), col.Type, b.Row(r))
			}
			rows = append(rows, row)
		}
	}
}

// TestSessionStatements runs statements through a session without
// database/sql: writes report what they affected, a query's result
// carries its columns, USE leaves the current database for the next
// session, and DDL and CALL reach the tiering service.
func TestSessionStatements(t *testing.T) {
	tier := &fakeTiering{}
	next := testSession(t, tier)

	run(t, next(), "CREATE DATABASE d")
	s := next()
	run(t, s, "USE d")
	require.Equal(t, "d", s.Database)
	run(t, next(), "CREATE TABLE t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)")
	res := run(t, next(), "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, ?)", sqlplan.Arg{Ordinal: 1, Value: "c"})
	require.EqualValues(t, 3, res.RowsAffected)
	require.False(t, res.HasLastInsertID, "t has no auto-increment column")
	require.EqualValues(t, 1, run(t, next(), "UPDATE t SET v = 'B' WHERE id = 2").RowsAffected)
	require.EqualValues(t, 1, run(t, next(), "DELETE FROM t WHERE id IN (SELECT id FROM t WHERE v = 'c')").RowsAffected)
	require.EqualValues(t, 2, run(t, next(), "CREATE TABLE u AS SELECT id, v FROM t").RowsAffected)

	cols, rows := queryRows(t, next(), "SELECT id, v FROM t ORDER BY id")
	require.Equal(t, []Column{{Name: "id", Type: metadata.BigIntType()}, {Name: "v", Type: metadata.StringType(), Nullable: true}}, cols)
	require.Equal(t, [][]any{{int64(1), "a"}, {int64(2), "B"}}, rows)
	_, rows = queryRows(t, next(), "SELECT v FROM u WHERE id = 2")
	require.Equal(t, [][]any{{"B"}}, rows)
	_, rows = queryRows(t, next(), "SELECT table_name FROM information_schema.tables WHERE table_schema = 'd' ORDER BY table_name")
	require.Equal(t, [][]any{{"t"}, {"u"}}, rows)
	cols, rows = queryRows(t, next(), "SHOW TABLES")
	require.Equal(t, []Column{{Name: "table_name", Type: metadata.StringType()}}, cols)
	require.Equal(t, [][]any{{"t"}, {"u"}}, rows)

	_, rows = queryRows(t, next(), "CALL sys.tier('t')")
	require.Equal(t, [][]any{{int64(7)}}, rows)
	require.Equal(t, []metadata.TablePath{{Database: "d", Table: "t"}}, tier.tiered)
	run(t, next(), "DROP TABLE u")
	require.Equal(t, 1, tier.removed, "a dropped table's lake files are removed")

	// A statement of no rows through Query returns an empty result; a
	// query through Run is refused.
	cols, rows = queryRows(t, next(), "CREATE VIEW w AS SELECT id FROM t")
	require.Empty(t, cols)
	require.Empty(t, rows)
	st, err := sqlplan.Parse("SELECT * FROM w")
	require.NoError(t, err)
	_, err = next().Run(context.Background(), st, nil)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	require.ErrorContains(t, err, "returns rows")
}

// TestSessionTransactionChecks: a session with a read view and no write
// buffer is a read-only transaction's, which refuses every write and DDL
// before doing any work.
func TestSessionTransactionChecks(t *testing.T) {
	next := testSession(t, &fakeTiering{})
	run(t, next(), "CREATE TABLE t (id BIGINT)")
	s := next()
	view, err := s.Engine.ReadView(context.Background())
	require.NoError(t, err)
	defer view.Close()
	s.View = view
	for _, text := range []string{"INSERT INTO t VALUES (1)", "DELETE FROM t", "CREATE TABLE u (id BIGINT)"} {
		st, err := sqlplan.Parse(text)
		require.NoError(t, err)
		_, err = s.Run(context.Background(), st, nil)
		require.Error(t, err, text)
	}
	st, err := sqlplan.Parse("INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	_, err = s.Run(context.Background(), st, nil)
	require.ErrorIs(t, err, metadata.ErrReadOnly)
	_, rows := queryRows(t, s, "SELECT COUNT(*) FROM t")
	require.Equal(t, [][]any{{int64(0)}}, rows)
}
