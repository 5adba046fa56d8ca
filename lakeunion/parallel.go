package lakeunion

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/planner"
)

// Causes of a pool's cancellation that are not errors of the scan: Next
// never returns them (it returns io.EOF after the limit, nothing after
// Close).
var (
	errLimitReached = errors.New("scan limit reached")
	errScanClosed   = errors.New("scan closed")
)

// PanicError is a panic in a split reader, recovered and returned as the
// scan's error: a bug in one reader fails its query, not the process.
type PanicError struct {
	// Split is the split whose reader panicked.
	Split planner.Split
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("panic reading split %v: %v", e.Split, e.Value)
}

// pool is the workers of a Scan that reads with more than one.
type pool struct {
	// ctx is cancelled, with the cause, by the first error, the limit,
	// Close, or the cancellation of the first Next's context.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// out carries the workers' batches to Next, each retained for it; it
	// is closed by the last worker to exit.
	out chan arrow.RecordBatch
	// next is the index of the next split to hand out.
	next atomic.Int64
	// produced counts the rows the workers took from their readers,
	// across workers, for the limit.
	produced atomic.Int64
	live     atomic.Int32
	wg       sync.WaitGroup
}

// start starts the workers, under ctx.
func (s *Scan) start(ctx context.Context) {
	p := &pool{out: make(chan arrow.RecordBatch, s.workers)}
	p.ctx, p.cancel = context.WithCancelCause(ctx)
	p.live.Store(int32(s.workers))
	p.wg.Add(s.workers)
	s.pool = p
	for range s.workers {
		go s.work(p)
	}
}

// nextParallel returns the next batch a worker sent, retained for the
// caller.
func (s *Scan) nextParallel(ctx context.Context) (arrow.RecordBatch, error) {
	if s.pool == nil {
		s.start(ctx)
	}
	p := s.pool
	if p.ctx.Err() != nil {
		return nil, s.poolErr(ctx)
	}
	select {
	case rec, ok := <-p.out:
		if ok {
			return rec, nil
		}
		// Every worker has exited; one that failed cancelled the pool
		// before it exited.
		if p.ctx.Err() != nil {
			return nil, s.poolErr(ctx)
		}
		return nil, io.EOF
	case <-p.ctx.Done():
		return nil, s.poolErr(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// poolErr is the error of a cancelled pool: the caller's context's, or
// the first error a worker met (or the first Next's context's).
func (s *Scan) poolErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Cause(s.pool.ctx)
}

// limitReached reports whether produced rows satisfy the limit.
func (s *Scan) limitReached(produced int64) bool {
	return s.opts.Limit > 0 && produced >= s.opts.Limit
}

// work takes splits and reads them until none is left, the limit is
// reached or the pool is cancelled. The last worker to exit closes out.
func (s *Scan) work(p *pool) {
	defer p.wg.Done()
	defer func() {
		if p.live.Add(-1) == 0 {
			close(p.out)
		}
	}()
	defer func() {
		if v := recover(); v != nil {
			p.cancel(&PanicError{Value: v, Stack: debug.Stack()})
		}
	}()
	for p.ctx.Err() == nil && !s.limitReached(p.produced.Load()) {
		i := int(p.next.Add(1) - 1)
		if i >= len(s.splits) {
			return
		}
		if err := s.readSplit(p, i); err != nil {
			p.cancel(err)
			return
		}
	}
}

// readSplit reads split i to its end, or until the limit is reached or
// the pool is cancelled, sending each non-empty batch, retained, to out.
// It releases the reader whatever happens, a panic included. An error
// after the pool's cancellation changes nothing: the first cause stays.
func (s *Scan) readSplit(p *pool, i int) (err error) {
	r, err := s.open(p.ctx, i)
	if err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Split: s.splits[i], Value: v, Stack: debug.Stack()}
		}
		if cerr := s.closeReader(r, i); err == nil {
			err = cerr
		}
	}()
	for p.ctx.Err() == nil {
		ok, err := s.advance(r, i)
		if err != nil || !ok {
			return err
		}
		rec := r.RecordBatch()
		n := rec.NumRows()
		if n == 0 {
			continue
		}
		total := p.produced.Add(n)
		if s.limitReached(total - n) {
			// Others produced the limit meanwhile: this batch is
			// surplus.
			return nil
		}
		s.countRows(i, n)
		rec.Retain()
		select {
		case p.out <- rec:
		case <-p.ctx.Done():
			rec.Release()
		}
		if s.limitReached(total) {
			return nil
		}
	}
	return nil
}

// guard runs f, turning a panic into a *PanicError naming split i.
func (s *Scan) guard(i int, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Split: s.splits[i], Value: v, Stack: debug.Stack()}
		}
	}()
	return f()
}

// open opens the reader of split i under ctx.
func (s *Scan) open(ctx context.Context, i int) (array.RecordReader, error) {
	s.mu.Lock()
	s.stats[i].Opened = true
	s.mu.Unlock()
	var r array.RecordReader
	err := s.guard(i, func() error {
		var err error
		r, err = OpenSplitFrom(ctx, s.src, s.table, s.splits[i], s.opts)
		return err
	})
	return r, err
}

// advance calls r.Next; a panic in it is its error.
func (s *Scan) advance(r array.RecordReader, i int) (ok bool, err error) {
	err = s.guard(i, func() error {
		ok = r.Next()
		return nil
	})
	return ok, err
}

// closeReader records r's counts in split i's stats, releases r and
// returns its error.
func (s *Scan) closeReader(r array.RecordReader, i int) error {
	var st ReadStats
	serr := s.guard(i, func() error {
		st = statsOf(r)
		return nil
	})
	s.mu.Lock()
	s.stats[i].addRead(st)
	s.mu.Unlock()
	err := s.guard(i, func() error {
		r.Release()
		return r.Err()
	})
	if err == nil {
		err = serr
	}
	return err
}

// countRows adds n rows yielded to split i's stats.
func (s *Scan) countRows(i int, n int64) {
	s.mu.Lock()
	s.stats[i].Rows += n
	s.mu.Unlock()
}
