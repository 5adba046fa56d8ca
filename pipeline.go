package fluss

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/flusslite/fluss/metadata"
)

// pipeline runs a result's operators and converts their batches into
// driver form in a goroutine of its own, one batch ahead of Rows.Next:
// database/sql's per-row work in the caller's goroutine then overlaps with
// the reading, filtering and converting of the next batch instead of
// following it. It holds at most three converted batches (the one Next
// reads, one queued, one being converted), whatever the size of the
// result. Only its goroutine touches the operators until stop returns.
type pipeline struct {
	out    chan pipelined
	cancel context.CancelFunc
	exited chan struct{}
}

// pipelined is one batch, or the error (io.EOF at the end) that ended the
// result.
type pipelined struct {
	b   *driverBatch
	err error
}

// startPipeline starts the goroutine reading op under ctx.
func startPipeline(ctx context.Context, op batches, conv *converter, types []metadata.DataType) *pipeline {
	ctx, cancel := context.WithCancel(ctx)
	p := &pipeline{out: make(chan pipelined, 1), cancel: cancel, exited: make(chan struct{})}
	go p.run(ctx, op, conv, types)
	return p
}

func (p *pipeline) run(ctx context.Context, op batches, conv *converter, types []metadata.DataType) {
	defer close(p.exited)
	defer func() {
		if v := recover(); v != nil {
			p.send(ctx, pipelined{err: fmt.Errorf("panic reading the result: %v\n%s", v, debug.Stack())})
		}
	}()
	for {
		b, err := op.Next(ctx)
		if err != nil {
			p.send(ctx, pipelined{err: err})
			return
		}
		if b.NumRows() == 0 {
			continue
		}
		if !p.send(ctx, pipelined{b: conv.convertBatch(b, types)}) {
			return
		}
	}
}

// send queues x, unless the pipeline is stopped (or its context done)
// first.
func (p *pipeline) send(ctx context.Context, x pipelined) bool {
	select {
	case p.out <- x:
		return true
	case <-ctx.Done():
		return false
	}
}

// next returns the next batch, or the error that ended the result; the
// caller's ctx ends the wait.
func (p *pipeline) next(ctx context.Context) (*driverBatch, error) {
	select {
	case x := <-p.out:
		if x.err != nil {
			// The result has ended: later calls see the same error.
			p.out <- x
		}
		return x.b, x.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stop cancels the goroutine and waits for it to exit. Idempotent.
func (p *pipeline) stop() {
	p.cancel()
	<-p.exited
}
