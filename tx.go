package fluss

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// Tx is a transaction: one consistent read view of the whole database,
// taken at Begin, and the transaction's writes, buffered until Commit.
//
//   - Isolation: sql.LevelDefault, sql.LevelSnapshot and
//     sql.LevelRepeatableRead are accepted and mean the same thing,
//     snapshot isolation: every query of the transaction sees the
//     database as it was at Begin (the same stop offset of every bucket,
//     the same KV and lake snapshots), across every table; a commit of
//     another connection is in the view in full or not at all. Other
//     levels are refused with ErrUnsupported.
//   - First committer wins: Commit fails with ErrConflict, applying
//     nothing, when a primary key the transaction upserted or deleted (in
//     any key table and partition) was written after Begin by another
//     commit, a transaction's or an autocommit statement's. Retry the
//     transaction. Appends to log tables never conflict; a transaction
//     that wrote nothing never conflicts.
//   - SELECT ... FOR UPDATE, FOR SHARE and LOCK IN SHARE MODE take no
//     lock: the primary keys of the key-table rows they select (FROM and
//     WHERE; LIMIT and grouping aside) join the Commit check as if
//     written, so a read-modify-write through them cannot lose an update.
//     Outside a transaction and in a read-only one they are plain reads.
//   - Savepoints: SAVEPOINT s, ROLLBACK TO [SAVEPOINT] s and RELEASE
//     SAVEPOINT s, as MySQL runs them; rolling back to s drops the
//     writes, FOR UPDATE keys and row counts buffered after it.
//   - Reads see the transaction's own buffered writes over that view:
//     for a primary-key table its upserts (partial updates and ON
//     DUPLICATE KEY UPDATE included) and deletes merged by key (a
//     buffered row replaces the view's row of its key, a buffered delete
//     hides it, a new key appears, in a partition the transaction creates
//     too); for a log table its appends after the view's rows. Every
//     read does: scans, point lookups, lookup joins, aggregates,
//     subqueries, views, and the reads of UPDATE, DELETE and INSERT ...
//     SELECT, so an UPDATE of a row the transaction already updated
//     starts from its new value. EXPLAIN shows a table read so as a
//     TxOverlay line. Only t$changelog (committed changes, with the
//     offsets and commit times buffered writes do not have yet) and
//     t$lake (what tiering wrote) read the view alone. Other connections
//     see none of the buffered writes before Commit.
//   - Writes (INSERT, UPDATE, DELETE, also through prepared statements)
//     are checked and counted when Exec runs, then buffered. Commit
//     applies them all with one atomic engine commit, across buckets,
//     partitions and tables: all or none, also across a crash. Rollback
//     drops them. A statement that fails inside a transaction buffers
//     nothing and leaves the transaction open, but Commit then commits
//     nothing (it fails and rolls back) unless the transaction rolled
//     back to a savepoint set before the failure.
//   - RowsAffected is exact at Exec time: counted against the view plus
//     the transaction's earlier writes. A row it counted cannot change
//     under it before Commit: if another commit wrote it, Commit fails.
//   - DDL and CALL are refused inside a transaction; so is every write
//     in a read-only one (ErrReadOnly).
//
// A Tx belongs to its connection and is used by one goroutine at a time.
// Commit or Rollback ends it and releases the view; closing the
// connection, or database/sql resetting it for another use, rolls it
// back.
type Tx struct {
	conn     *Conn
	view     *storage.ReadView
	buf      *storage.WriteBuffer // nil when read-only
	readOnly bool
	// savepoints are the transaction's savepoints, oldest first.
	savepoints []savepoint
	// failed is the first error a statement of the transaction returned
	// (nil: none, or rolled back to a savepoint set before it): Commit
	// then commits nothing.
	failed error
}

// savepoint is a named point of the transaction's write buffer, and
// whether a statement had failed by then.
type savepoint struct {
	name   string
	mark   storage.BufferMark
	failed error
}

var _ driver.Tx = (*Tx)(nil)

// BeginTx starts a transaction: it takes the read view every query of the
// transaction reads. See Tx for what the isolation levels mean.
func (c *Conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if c.tx != nil {
		return nil, wrapErr(fmt.Errorf("a transaction is already open on this connection; commit or roll it back first: %w", metadata.ErrUnsupported))
	}
	switch level := sql.IsolationLevel(opts.Isolation); level {
	case sql.LevelDefault, sql.LevelSnapshot, sql.LevelRepeatableRead:
	default:
		return nil, wrapErr(fmt.Errorf("isolation level %s is not supported; transactions read one snapshot (use the default, sql.LevelSnapshot or sql.LevelRepeatableRead): %w",
			level, metadata.ErrUnsupported))
	}
	takeView := c.connector.shared.engine.WriteView
	if opts.ReadOnly {
		takeView = c.connector.shared.engine.ReadView // commits nothing: nothing to check
	}
	view, err := takeView(ctx)
	if err != nil {
		return nil, wrapErr(err)
	}
	tx := &Tx{conn: c, view: view, readOnly: opts.ReadOnly}
	if !opts.ReadOnly {
		tx.buf = view.NewWriteBuffer()
	}
	c.tx = tx
	return tx, nil
}

// Commit applies the buffered writes atomically and ends the
// transaction. When the commit fails (ErrConflict, a table dropped
// meanwhile, a value the table no longer accepts, the engine closed),
// nothing of it is applied; the transaction ends either way.
func (tx *Tx) Commit() error {
	if tx.conn.tx != tx {
		return wrapErr(fmt.Errorf("transaction already ended: %w", metadata.ErrClosed))
	}
	if tx.failed != nil {
		return joinEnd(tx.failedCommitErr(), tx.end())
	}
	var err error
	if tx.buf != nil {
		if err = tx.conn.check(); err == nil {
			_, err = tx.buf.Commit(context.Background())
			err = wrapErr(err)
		}
	}
	return joinEnd(err, tx.end())
}

// joinEnd joins Commit's error with the error of ending the transaction;
// either alone comes back as it is, a *Error.
func joinEnd(err, endErr error) error {
	if err == nil || endErr == nil {
		return cmp.Or(err, endErr)
	}
	return errors.Join(err, endErr)
}

// failedCommitErr is Commit's error after a statement of the
// transaction failed: with the failure's code, wrapping it.
func (tx *Tx) failedCommitErr() error {
	cause := wrapErr(tx.failed)
	code, msg := CodeCanceled, cause.Error() // a context error
	if fe, ok := cause.(*Error); ok {
		code, msg = fe.Code, fe.Msg
	}
	return &Error{Code: code, Pos: -1, err: cause,
		Msg: "commit after a statement of the transaction failed (" + msg + "): nothing was committed, the transaction is rolled back; roll back to a savepoint set before the failure to go on instead"}
}

// noteErr records that a statement of the connection's transaction
// returned err to database/sql: the transaction then commits nothing,
// whatever the caller does next (an ORM that keeps the error on the side
// and commits anyway), unless it rolls back to a savepoint set before it.
func (c *Conn) noteErr(err error) {
	if err != nil && c.tx != nil && c.tx.failed == nil && !errors.Is(err, driver.ErrBadConn) {
		c.tx.failed = err
	}
}

// Rollback drops the buffered writes and ends the transaction.
func (tx *Tx) Rollback() error {
	if tx.conn.tx != tx {
		return wrapErr(fmt.Errorf("transaction already ended: %w", metadata.ErrClosed))
	}
	return tx.end()
}

// end releases the view and detaches the transaction from its connection.
func (tx *Tx) end() error {
	tx.conn.tx = nil
	tx.buf = nil
	return wrapErr(tx.view.Close())
}

// readView is the read view of the connection's transaction, or nil
// outside one.
func (c *Conn) readView() *storage.ReadView {
	if c.tx == nil {
		return nil
	}
	return c.tx.view
}

// savepoint runs SAVEPOINT, ROLLBACK TO SAVEPOINT and RELEASE SAVEPOINT
// as MySQL does. SAVEPOINT marks the transaction's writes so far (a name
// in use moves to here); ROLLBACK TO drops everything buffered after the
// mark — writes, keys read FOR UPDATE, and the rows they count against —
// and the savepoints set after it, keeping the one named; RELEASE drops
// the savepoint and those set after it, keeping the writes. Names compare
// case-insensitively. Outside a transaction SAVEPOINT does nothing (the
// statement is its own transaction) and the other two find no savepoint.
func (c *Conn) savepoint(sp *sqlplan.Savepoint) error {
	tx := c.tx
	if tx == nil {
		if sp.Kind == sqlplan.SavepointSet {
			return nil
		}
		return fmt.Errorf("SAVEPOINT %s does not exist: there is no transaction open: %w", sp.Name, metadata.ErrNotFound)
	}
	i := len(tx.savepoints) - 1
	for i >= 0 && !strings.EqualFold(tx.savepoints[i].name, sp.Name) {
		i--
	}
	switch sp.Kind {
	case sqlplan.SavepointSet:
		if i >= 0 {
			tx.savepoints = slices.Delete(tx.savepoints, i, i+1)
		}
		var mark storage.BufferMark
		if tx.buf != nil {
			mark = tx.buf.Mark()
		}
		tx.savepoints = append(tx.savepoints, savepoint{name: sp.Name, mark: mark, failed: tx.failed})
		return nil
	}
	if i < 0 {
		return fmt.Errorf("SAVEPOINT %s does not exist: %w", sp.Name, metadata.ErrNotFound)
	}
	if sp.Kind == sqlplan.SavepointRelease {
		tx.savepoints = tx.savepoints[:i]
		return nil
	}
	if tx.buf != nil {
		tx.buf.Restore(tx.savepoints[i].mark)
	}
	tx.failed = tx.savepoints[i].failed
	tx.savepoints = tx.savepoints[:i+1]
	return nil
}
