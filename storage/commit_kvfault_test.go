package storage

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestCommitKvFaultAfterCommitPoint fails the KV store (a background
// flush hitting ENOSPC, as on a full disk) after a journaled commit's
// batches are written and fsynced, before its KV write. The commit is
// refused and its batches rolled back, so the journal must not record it
// as done: the reopen took the done record's end offsets for acknowledged
// and reported the key table's buckets as damaged ("the log ends at
// offset N, but offsets up to M were acknowledged").
func TestCommitKvFaultAfterCommitPoint(t *testing.T) {
	fsys := NewMemFS()
	onFS := func(o *Options) { o.FS, o.InMemory, o.Dir = fsys, false, "db" }
	var (
		armed atomic.Bool
		eng   atomic.Pointer[Engine]
	)
	full := fmt.Errorf("KV store: write 000005.sst: %w", syscall.ENOSPC)
	var none []string
	func() {
		e, _ := testEngine(t, "", func(o *Options) {
			onFS(o)
			o.TestingCrashCommit = func(_ int, recorded bool) bool {
				if recorded && armed.Load() {
					// The commit point is behind; the KV store fails
					// before the commit writes to it.
					eng.Load().kvMon.record(full)
				}
				return false
			}
		})
		eng.Store(e)
		defer e.Close()
		createCommitTables(t, e)
		_, err := e.Commit(ctx, baselineCommit())
		require.NoError(t, err)
		none = commitState(t, e)
		armed.Store(true)
		_, err = e.Commit(ctx, targetCommit())
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.Equal(t, none, commitState(t, e), "readers never see the refused commit")
		_, err = e.Commit(ctx, baselineCommit())
		require.ErrorIs(t, err, metadata.ErrReadOnly)
	}()

	e, _ := testEngine(t, "", onFS)
	defer e.Close()
	require.Equal(t, none, commitState(t, e), "the reopen holds what was acknowledged, and no bucket is damaged")
	require.Zero(t, journalRecordBytes(t, fsys, filepath.Join("db", journalFile)), "Open settles and empties the journal")
	_, err := e.Commit(ctx, targetCommit())
	require.NoError(t, err, "the buckets take writes after the reopen")
}
