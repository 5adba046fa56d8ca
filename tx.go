package fluss

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// Tx is a transaction: one consistent read view of the whole database,
// taken at Begin, and the transaction's writes, buffered until Commit.
//
//   - Isolation: sql.LevelDefault, sql.LevelSnapshot and
//     sql.LevelRepeatableRead are accepted and mean the same thing,
//     snapshot isolation of reads: every query of the transaction sees the
//     database as it was at Begin (the same stop offset of every bucket,
//     the same KV and lake snapshots), across every table; a commit of
//     another connection is in the view in full or not at all. Other
//     levels are refused with ErrUnsupported.
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
//     nothing and leaves the transaction open.
//   - RowsAffected is exact at Exec time: counted against the view plus
//     the transaction's earlier writes. Commit applies the writes to the
//     state as it is at Commit, without checking for conflicts: the last
//     commit wins, and a row another connection changed meanwhile may be
//     affected differently than counted.
//   - DDL and CALL are refused inside a transaction; so is every write
//     in a read-only one (ErrReadOnly).
//
// A Tx belongs to its connection and is used by one goroutine at a time.
// Commit or Rollback ends it and releases the view; closing the
// connection rolls it back.
type Tx struct {
	conn     *Conn
	view     *storage.ReadView
	buf      *storage.WriteBuffer // nil when read-only
	readOnly bool
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
	view, err := c.connector.shared.engine.ReadView(ctx)
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
// transaction. When the commit fails (a table dropped meanwhile, a value
// the table no longer accepts, the engine closed), nothing of it is
// applied; the transaction ends either way.
func (tx *Tx) Commit() error {
	if tx.conn.tx != tx {
		return wrapErr(fmt.Errorf("transaction already ended: %w", metadata.ErrClosed))
	}
	var err error
	if tx.buf != nil && len(tx.buf.Writes()) > 0 {
		if err = tx.conn.check(); err == nil {
			_, err = tx.conn.connector.shared.engine.Commit(context.Background(), tx.buf.Writes())
			err = wrapErr(err)
		}
	}
	return errors.Join(err, tx.end())
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
