package storage

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/flusslite/fluss/metadata"
)

// conflictSet is the engine's first-committer-wins bookkeeping: for each
// conflict key written while a write view (Engine.WriteView) is open, the
// sequence number of the last commit that wrote it. A transaction's commit
// conflicts when a key it writes, or read FOR UPDATE, was written by a
// commit numbered after its view's cut.
//
// A conflict key is a KV-store key, so that keys of different kinds never
// collide: a primary-key row's data key (table, partition, bucket and the
// encoded physical key). A key of another kind would have to be guarded
// the way a data key is guarded by its bucket's lock.
//
// A commit checks its keys once it holds the locks of every bucket it
// writes, before it writes anything (check), and records them once it is
// durable, just before it publishes its high watermarks, holding the
// engine's cutMu shared (record). Its bucket locks are held from the
// check to the publication, so two commits writing one key are ordered
// by the bucket's lock; and a view is cut under cutMu held exclusively,
// so a view either sees a commit and was cut at or after its sequence
// number, or does not see it and conflicts on its keys. A commit that
// fails before it records its keys leaves none behind.
//
// While no write view is open nothing is recorded (the cost of a commit is
// one atomic load), and the last view to close drops the recorded keys.
// While views are open, keys that no open view can conflict on (recorded
// at or before the oldest open cut) are pruned as the set grows.
type conflictSet struct {
	// open counts the open write views; commits record keys while it is
	// above 0. Changed under mu, read without it.
	open atomic.Int64
	// mu guards the recorded keys, the sequence and the open views.
	mu struct {
		sync.Mutex
		// seq is the number of the last commit that recorded keys.
		seq int64
		// last maps a conflict key to the seq of the last commit that
		// wrote it.
		last map[string]int64
		// views are the open write views and the seq they were cut at.
		views map[*ReadView]int64
		// pruneAt is the size of last at which it is pruned next.
		pruneAt int
	}
}

// minPrune is the size below which the recorded keys are not pruned.
const minPrune = 4096

// registerLocked opens write view v at the current sequence. The caller
// holds the engine's cutMu exclusively (the view's cut), so no commit is
// between its check and its apply.
func (s *conflictSet) registerLocked(v *ReadView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.views == nil {
		s.mu.views = map[*ReadView]int64{}
	}
	v.seq = s.mu.seq
	s.mu.views[v] = v.seq
	s.open.Add(1)
}

// unregister closes write view v; the last one to close drops every
// recorded key.
func (s *conflictSet) unregister(v *ReadView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.views[v]; !ok {
		return
	}
	delete(s.mu.views, v)
	if s.open.Add(-1) == 0 {
		s.mu.last = nil
		s.mu.pruneAt = 0
	}
}

// tracking reports whether a write view is open now. A commit that finds
// none collects no keys as it merges; should a view be cut before the
// commit publishes its writes, the commit collects them then (record).
func (s *conflictSet) tracking() bool { return s.open.Load() > 0 }

// commitConflicts collects the conflict keys of one commit: the keys it
// writes, checked against the commit's view (when it has one) and
// recorded for the views open; and the keys read FOR UPDATE, checked only.
// Not safe for concurrent use; one per commit.
type commitConflicts struct {
	written, read []string
	// paths name the table of each key (written, then read), for the
	// message of a conflict.
	writtenPaths, readPaths []metadata.TablePath
}

// write adds a key the commit writes. A nil c (no view is open and the
// commit is no transaction's) keeps nothing, so a writer calls it
// unconditionally.
func (c *commitConflicts) write(path metadata.TablePath, key []byte) {
	if c == nil {
		return
	}
	c.written = append(c.written, string(key))
	c.writtenPaths = append(c.writtenPaths, path)
}

// readForUpdate adds a key the transaction read FOR UPDATE.
func (c *commitConflicts) readForUpdate(path metadata.TablePath, key []byte) {
	if c == nil {
		return
	}
	c.read = append(c.read, string(key))
	c.readPaths = append(c.readPaths, path)
}

// check fails the commit with ErrConflict when one of its keys was
// written by a commit after view's cut (view nil: an autocommit write,
// which checks nothing), or by an earlier member of its group (pending:
// keys of commits that passed their check and are applied with it; nil:
// none). The caller holds every bucket lock of the commit, from before the
// check until it has recorded its keys (record), so no commit writing one
// of its keys can come between.
func (s *conflictSet) check(view *ReadView, c *commitConflicts, pending map[string]bool) error {
	if view == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range c.written {
		if seq, ok := s.mu.last[k]; (ok && seq > view.seq) || pending[k] {
			return fmt.Errorf("%w: a row of %s this transaction writes was written by another commit after the transaction began; nothing was applied, retry the transaction", metadata.ErrConflict, c.writtenPaths[i])
		}
	}
	for i, k := range c.read {
		if seq, ok := s.mu.last[k]; (ok && seq > view.seq) || pending[k] {
			return fmt.Errorf("%w: a row of %s this transaction read FOR UPDATE was written by another commit after the transaction began; nothing was applied, retry the transaction", metadata.ErrConflict, c.readPaths[i])
		}
	}
	return nil
}

// record records the keys the commits cs write, under one new sequence
// number, for the write views open. The caller holds the engine's cutMu
// shared and has not yet published the commits' high watermarks: a view
// cut before sees none of them and conflicts on their keys, one cut after
// sees them all.
func (s *conflictSet) record(cs ...*commitConflicts) {
	if s.open.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.seq++
	if s.mu.last == nil {
		s.mu.last = map[string]int64{}
	}
	for _, c := range cs {
		for _, k := range c.written {
			s.mu.last[k] = s.mu.seq
		}
	}
	if len(s.mu.last) >= max(s.mu.pruneAt, minPrune) {
		s.pruneLocked()
	}
}

// pruneLocked drops the keys no open view can conflict on: those recorded
// at or before the oldest open view's cut.
func (s *conflictSet) pruneLocked() {
	oldest := s.mu.seq
	for _, seq := range s.mu.views {
		oldest = min(oldest, seq)
	}
	for k, seq := range s.mu.last {
		if seq <= oldest {
			delete(s.mu.last, k)
		}
	}
	s.mu.pruneAt = 2 * len(s.mu.last)
}
