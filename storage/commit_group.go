package storage

import (
	"maps"
	"sync"

	"github.com/flusslite/fluss/metadata"
)

// commitGroup applies small durable commits together (group commit by
// combining). A commit holds its buckets' locks until its fsync returns,
// so commits to one bucket (a table of one bucket, its hot rows) used to
// queue behind each other's fsync, one fsync each, and the journal's
// shared fsync only ever helped commits to other buckets. Instead, a
// small commit with Sync joins the queue: the first to find no leader
// leads, taking the whole queue, locking the buckets of all of it and
// merging each member's writes in arrival order over the state the
// members before it leave, each with its own conflict check; then one
// applyLocked writes and fsyncs them all, and the leader hands the queue
// that formed meanwhile to its first member.
//
// Each member is still atomic, and what each one reads and is checked
// against is what it would be had the members committed one after the
// other in that order: a member's merge reads the rows earlier members
// wrote, its conflict check sees the keys they recorded, and a member
// that fails (a conflict, a refused row) takes back what it merged and
// fails alone. The group is applied as one commit: its rows of a bucket
// go into one batch with one commit timestamp, visible together; should
// the apply fail, every member that had not failed gets its error and
// none is applied. Commits to tables with secondary indexes, large ones
// and those without Sync (no fsync to share) take the direct path.
type commitGroup struct {
	mu      sync.Mutex
	leading bool
	queue   []*commitMember
}

// maxCombinedRows bounds the rows of a commit that joins a group.
const maxCombinedRows = 64

// commitMember is one commit in a group.
type commitMember struct {
	preps   []*preparedWrite
	entries []*tableEntry
	view    *ReadView
	buckets map[metadata.TableBucket]*commitBucket
	dest    [][]*commitBucket

	res  []WriteResult
	err  error
	done bool
	// wake is signalled once: the member is done, or it leads now.
	wake chan struct{}
}

// combines reports whether a commit joins a group.
func (e *Engine) combines(preps []*preparedWrite, entries []*tableEntry) bool {
	if !e.opts.Sync || e.journal == nil {
		return false
	}
	rows := 0
	for i, p := range preps {
		if entries[i].indexes != nil {
			return false
		}
		rows += len(p.routed.values)
	}
	return rows <= maxCombinedRows
}

// combine commits m in a group and returns its results.
func (e *Engine) combine(m *commitMember) ([]WriteResult, error) {
	g := &e.group
	m.wake = make(chan struct{}, 1)
	g.mu.Lock()
	g.queue = append(g.queue, m)
	if g.leading {
		g.mu.Unlock()
		<-m.wake
		if m.done {
			return m.res, m.err
		}
		g.mu.Lock() // handed the lead: the queue starts with m
	}
	g.leading = true
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()

	e.commitMembers(batch)

	g.mu.Lock()
	var next *commitMember
	if len(g.queue) > 0 {
		next = g.queue[0]
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	for _, o := range batch {
		if o != m {
			o.wake <- struct{}{}
		}
	}
	if next != nil {
		next.wake <- struct{}{}
	}
	return m.res, m.err
}

// commitMembers applies a group's members (see commitGroup), setting
// each one's results or error.
func (e *Engine) commitMembers(batch []*commitMember) {
	finish := func(err error) {
		for _, m := range batch {
			if !m.done {
				m.res, m.err, m.done = nil, err, true
			}
		}
	}
	// One share per bucket for the whole group: the first member's.
	shares := map[metadata.TableBucket]*commitBucket{}
	var locked []*commitBucket
	for _, m := range batch {
		for tb, cb := range m.buckets {
			if shares[tb] == nil {
				shares[tb] = cb
				locked = append(locked, cb)
			}
		}
		for _, d := range m.dest {
			for r, cb := range d {
				if cb != nil {
					d[r] = shares[cb.tb]
				}
			}
		}
	}
	unlock := lockBuckets(locked)
	defer unlock()
	if err := e.readOnlyErr(); err != nil {
		finish(err)
		return
	}
	var (
		preps   []*preparedWrite
		keys    []*commitConflicts
		pending = map[string]bool{} // keys of the members merged so far
	)
	for _, m := range batch {
		// A member alone has nothing to take back from: when it fails,
		// nothing is applied.
		undo := func() {}
		if len(batch) > 1 {
			undo = saveShares(m.dest)
		}
		res, ck, err := e.mergeCommit(m.preps, m.entries, m.dest, m.view, true)
		if err == nil {
			err = e.conflicts.check(m.view, ck, pending)
		}
		if err != nil {
			undo()
			m.err, m.done = err, true
			continue
		}
		m.res = res
		preps = append(preps, m.preps...)
		keys = append(keys, ck)
		for _, k := range ck.written {
			pending[k] = true
		}
	}
	if len(preps) == 0 {
		return // every member failed: nothing to apply
	}
	record := func() { e.conflicts.record(keys...) }
	if err := e.applyBuckets(commitLabel(preps), locked, record); err != nil {
		finish(err)
		return
	}
	for _, m := range batch {
		m.done = true
	}
}

// saveShares records the state of the bucket shares a member writes and
// returns what puts it back, for a member that fails after merging part
// of its writes.
func saveShares(dest [][]*commitBucket) (undo func()) {
	type saved struct {
		cb            *commitBucket
		rows, changes int
		state         map[string][]any
	}
	var s []saved
	seen := map[*commitBucket]bool{}
	for _, d := range dest {
		for _, cb := range d {
			if cb == nil || seen[cb] {
				continue
			}
			seen[cb] = true
			s = append(s, saved{cb: cb, rows: len(cb.rows), changes: len(cb.changes), state: maps.Clone(cb.state)})
		}
	}
	return func() {
		for _, v := range s {
			v.cb.rows = v.cb.rows[:v.rows]
			v.cb.changes = v.cb.changes[:v.changes]
			v.cb.state = v.state
		}
	}
}
