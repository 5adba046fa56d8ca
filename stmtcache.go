package fluss

import (
	"container/list"
	"sync"

	"github.com/flusslite/fluss/sqlplan"
)

// stmtCacheSize is how many parsed statements a connector keeps.
const stmtCacheSize = 256

// stmtCache is an LRU of parsed statements keyed by their SQL text, shared
// by a connector's connections. Sharing is safe because a parsed statement
// is never mutated: binding builds new plans from it (see sqlplan's
// package comment), so two connections may bind the same one at once.
type stmtCache struct {
	mu    sync.Mutex
	max   int
	order *list.List               // front is most recently used; guarded by mu
	items map[string]*list.Element // guarded by mu
}

type stmtCacheEntry struct {
	text   string
	parsed sqlplan.Statement
}

func newStmtCache(max int) *stmtCache {
	return &stmtCache{max: max, order: list.New(), items: make(map[string]*list.Element)}
}

// parse returns the parsed form of text, from the cache when it is there.
// Parse errors are not cached: they are cheap to find again and carry the
// position of the caller's text.
func (c *stmtCache) parse(text string) (sqlplan.Statement, error) {
	if st, ok := c.get(text); ok {
		return st, nil
	}
	st, err := sqlplan.Parse(text)
	if err != nil {
		return nil, err
	}
	c.put(text, st)
	return st, nil
}

func (c *stmtCache) get(text string) (sqlplan.Statement, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[text]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*stmtCacheEntry).parsed, true
}

func (c *stmtCache) put(text string, st sqlplan.Statement) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[text]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.items[text] = c.order.PushFront(&stmtCacheEntry{text: text, parsed: st})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*stmtCacheEntry).text)
	}
}

// len is the number of cached statements.
func (c *stmtCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
