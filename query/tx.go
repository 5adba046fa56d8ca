package query

import (
	"context"
	"fmt"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/storage"
)

// Every scan of a transaction plans at its read view.
var _ planner.ReadView = (*storage.ReadView)(nil)

// inTx reports whether the session runs in a transaction.
func (s *Session) inTx() bool { return s.View != nil }

// txWrite buffers a write in the session's transaction and returns the
// rows it affects; ok is false outside a transaction, where the caller
// writes itself. checked are the rows' checks against the table (nil:
// not checked), which the buffer need not do again. The caller has
// passed checkTxWrite.
func (s *Session) txWrite(ctx context.Context, w storage.Write, checked *storage.CheckedRows) (n int64, ok bool, err error) {
	if !s.inTx() {
		return 0, false, nil
	}
	if s.Writes == nil {
		return 0, true, fmt.Errorf("write to %s in a read-only transaction: %w", w.Path, metadata.ErrReadOnly)
	}
	var res storage.WriteResult
	if checked != nil {
		res, err = s.Writes.AddChecked(ctx, w, *checked)
	} else {
		res, err = s.Writes.Add(ctx, w)
	}
	return res.RowsAffected, true, err
}

// checkTxWrite refuses a write (verb names the statement) before it does
// any work: every write in a read-only transaction. The reads of an
// UPDATE, DELETE or INSERT ... SELECT in a transaction see its earlier
// writes (txoverlay.go), so nothing else is refused.
func (s *Session) checkTxWrite(verb string, path metadata.TablePath) error {
	if !s.inTx() {
		return nil
	}
	if s.Writes == nil {
		return fmt.Errorf("%s of %s in a read-only transaction: %w", verb, path, metadata.ErrReadOnly)
	}
	return nil
}

// checkTxStatement refuses, inside a transaction, the statements that
// would take effect on their own: DDL and CALL.
func (s *Session) checkTxStatement(what string) error {
	if !s.inTx() {
		return nil
	}
	return fmt.Errorf("%s inside a transaction: it would take effect at once, not at Commit; run it outside the transaction: %w", what, metadata.ErrUnsupported)
}
