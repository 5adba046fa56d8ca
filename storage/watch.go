package storage

import (
	"slices"
	"sync"
)

// commitWatch wakes the subscriptions of a table when a commit to it
// becomes visible or its partitions change. Each watched table has one
// channel that the next change closes (waking every waiter at once) and
// forgets, so the change after it makes a fresh one: nobody polls, and
// a table nobody watches costs a map lookup per commit.
//
// A waiter takes the channel before it looks for new data, so a commit
// that lands between its look and its wait still wakes it.
type commitWatch struct {
	mu struct {
		sync.Mutex
		// chans holds the open channel of each watched table id.
		chans map[int64]chan struct{}
		// closed is set by closeAll: every later wait returns a closed
		// channel, so nobody waits on a closed engine.
		closed bool
	}
}

// closedChan is returned to waiters of a closed engine.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// wait returns the channel the next change of table closes.
func (w *commitWatch) wait(table int64) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return closedChan
	}
	ch := w.mu.chans[table]
	if ch == nil {
		if w.mu.chans == nil {
			w.mu.chans = map[int64]chan struct{}{}
		}
		ch = make(chan struct{})
		w.mu.chans[table] = ch
	}
	return ch
}

// notify wakes the waiters of each table in tables.
func (w *commitWatch) notify(tables ...int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range tables {
		if ch := w.mu.chans[id]; ch != nil {
			close(ch)
			delete(w.mu.chans, id)
		}
	}
}

// closeAll wakes every waiter, for good.
func (w *commitWatch) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mu.closed = true
	for id, ch := range w.mu.chans {
		close(ch)
		delete(w.mu.chans, id)
	}
}

// notifyCommitted wakes the subscriptions of the tables a commit's
// buckets belong to; their high watermarks are published already.
func (e *Engine) notifyCommitted(buckets []*bucketWrite) {
	ids := make([]int64, 0, 1)
	for _, b := range buckets {
		if !slices.Contains(ids, b.tb.TableID) {
			ids = append(ids, b.tb.TableID)
		}
	}
	e.watch.notify(ids...)
}

// notifyCatalog wakes the subscriptions of every table whose partitions
// changed from prev to next, or that next no longer has.
func (e *Engine) notifyCatalog(prev, next *catalog) {
	var ids []int64
	for id, t := range prev.byID {
		n := next.byID[id]
		if n == nil || !samePartitions(t, n) {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		e.watch.notify(ids...)
	}
}

func samePartitions(a, b *tableEntry) bool {
	if len(a.Partitions) != len(b.Partitions) {
		return false
	}
	for i := range a.Partitions {
		if a.Partitions[i].ID != b.Partitions[i].ID {
			return false
		}
	}
	return true
}
