package exec

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/metadata"
)

// KeyLookup fetches the build side of a lookup join: the rows whose keys
// are among keys, each a distinct tuple of the probe's values (canonical,
// none NULL) of the probe keys LookupJoin was given positions of.
type KeyLookup func(ctx context.Context, keys [][]any) (Operator, error)

// LookupJoin joins a small probe side with a key table by looking its
// keys up instead of reading the table: on the first Next it reads the
// probe side whole, collects its distinct key tuples (a tuple with a NULL
// matches nothing, unless the key is null-safe, when it is still never
// stored as a primary key), asks lookup for the rows of those keys, and
// joins them as HashJoin does, with the held probe rows replayed in their
// order. The held probe rows count against opts.MemoryLimit.
//
// positions are the indexes of the probe keys whose values are looked up
// (the ones over the key columns); the others, and the residual, are
// checked by the join as usual.
func LookupJoin(probe Operator, lookup KeyLookup, positions []int, spec JoinSpec, opts Options) Operator {
	return &lookupJoin{probe: probe, lookup: lookup, positions: positions, spec: spec, opts: opts.withDefaults(),
		budget: memBudget{limit: opts.MemoryLimit}}
}

type lookupJoin struct {
	probe     Operator
	positions []int
	lookup    KeyLookup
	spec      JoinSpec
	opts      Options
	budget    memBudget
	held      []Batch
	inner     Operator
	closed    bool
}

func (l *lookupJoin) Next(ctx context.Context) (Batch, error) {
	if l.inner == nil {
		if err := l.start(ctx); err != nil {
			return Batch{}, err
		}
	}
	return l.inner.Next(ctx)
}

// start reads the probe side, looks its keys up and builds the join.
func (l *lookupJoin) start(ctx context.Context) error {
	e := &env{layout: l.spec.ProbeLayout}
	keys := make([]valueBinder, len(l.positions))
	types := make([]metadata.DataType, len(l.positions))
	for i, pos := range l.positions {
		if pos < 0 || pos >= len(l.spec.ProbeKeys) {
			return fmt.Errorf("lookup join key position %d of %d keys: %w", pos, len(l.spec.ProbeKeys), metadata.ErrInvalidValue)
		}
		k := l.spec.ProbeKeys[pos]
		var err error
		if keys[i], err = compileValue(k, e); err != nil {
			return fmt.Errorf("lookup join key %s: %w", k, err)
		}
		types[i] = k.Type()
	}
	seen := map[string]bool{}
	var tuples [][]any
	var enc []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := l.probe.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		b.Rec.Retain()
		if b.Sel != nil {
			b.Sel = append([]int32(nil), b.Sel...)
		}
		l.held = append(l.held, b)
		l.budget.grow(recordBytes(b.Rec))
		fns := make([]valueFn, len(keys))
		for i, k := range keys {
			fns[i] = k(b.Rec)
		}
	rows:
		for i := 0; i < b.NumRows(); i++ {
			r := b.Row(i)
			tuple := make([]any, len(fns))
			enc = enc[:0]
			for k, f := range fns {
				v := f(r)
				if v == nil {
					continue rows
				}
				tuple[k] = v
				enc = appendValueKey(enc, types[k], v)
			}
			if err := e.takeErr(); err != nil {
				return err
			}
			if !seen[string(enc)] {
				seen[string(enc)] = true
				tuples = append(tuples, tuple)
				l.budget.grow(keyBytes(len(enc)))
			}
		}
		if err := l.budget.check("JOIN", func() string { return count(int64(len(l.held)), "probe batch") }); err != nil {
			return err
		}
	}
	build, err := l.lookup(ctx, tuples)
	if err != nil {
		return err
	}
	replay := &heldOp{batches: l.held}
	l.held = nil
	j, err := HashJoin(replay, build, l.spec, l.opts)
	if err != nil {
		replay.Close()
		build.Close()
		return err
	}
	l.inner = j
	return nil
}

func (l *lookupJoin) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	for _, b := range l.held {
		b.Rec.Release()
	}
	l.held = nil
	err := l.probe.Close()
	if l.inner != nil {
		if cerr := l.inner.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// heldOp replays batches read earlier, releasing each once the next is
// asked for.
type heldOp struct {
	batches []Batch
	cur     arrow.RecordBatch
}

func (h *heldOp) Next(context.Context) (Batch, error) {
	if h.cur != nil {
		h.cur.Release()
		h.cur = nil
	}
	if len(h.batches) == 0 {
		return Batch{}, io.EOF
	}
	b := h.batches[0]
	h.batches = h.batches[1:]
	h.cur = b.Rec
	return b, nil
}

func (h *heldOp) Close() error {
	if h.cur != nil {
		h.cur.Release()
		h.cur = nil
	}
	for _, b := range h.batches {
		b.Rec.Release()
	}
	h.batches = nil
	return nil
}

// KeyValue converts a probe key value to the type of the key column it
// is looked up in; ok is false when it is no value of that type exactly
// (an INT key looked up with 2.5 or 2^40 matches no stored key).
func KeyValue(t metadata.DataType, v any) (any, bool) {
	out, err := metadata.CoerceValue(t, v)
	if err != nil || out == nil || sqlCompare(out, v) != 0 {
		return nil, false
	}
	return out, true
}
