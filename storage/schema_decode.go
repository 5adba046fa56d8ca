package storage

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// batchDecoders decode the record batches of one table (log batches, a
// KV snapshot's) each by the schema it was written with, its header's
// schema id, into the columns of the table's current schema a reader
// projects. A batch of an earlier schema holds a prefix of the current
// columns (see metadata.PastSchema): the columns it lacks read as NULL.
// Not safe for concurrent use; Release it.
type batchDecoders struct {
	info       *metadata.TableInfo
	full       *arrow.Schema // the current schema's
	projection []int         // nil: every column
	mem        memory.Allocator
	cur        *logformat.RecordDecoder
	past       map[int16]*pastDecoder
}

// pastDecoder decodes the batches of one earlier schema.
type pastDecoder struct {
	// dec decodes the projected columns the schema had; nil when it had
	// none of them.
	dec *logformat.RecordDecoder
	// cols[i] is the decoded column that output column i is, or -1 for a
	// column the schema lacked; pad[i] is then what it reads.
	cols []int
	pad  []any
}

func newBatchDecoders(entry *tableEntry, projection []int, mem memory.Allocator) (*batchDecoders, error) {
	cur, err := logformat.NewRecordDecoder(entry.arrow, projection, mem)
	if err != nil {
		return nil, err
	}
	return &batchDecoders{info: &entry.Info, full: entry.arrow, projection: projection, mem: mem, cur: cur}, nil
}

// Schema is the schema of the decoded records.
func (d *batchDecoders) Schema() *arrow.Schema { return d.cur.Schema() }

// forSchema returns the decoder of batches of schema id: the current
// schema's (past nil) or an earlier one's.
func (d *batchDecoders) forSchema(id int16) (cur *logformat.RecordDecoder, past *pastDecoder, err error) {
	if int32(id) == d.info.SchemaID {
		return d.cur, nil, nil
	}
	if p, ok := d.past[id]; ok {
		return nil, p, nil
	}
	k, ok := d.info.SchemaColumns(int32(id))
	if !ok || k > d.full.NumFields() {
		return nil, nil, fmt.Errorf("%w: a batch of schema id %d, which table %s (schema id %d) never had", metadata.ErrCorrupt, id, d.info.Path, d.info.SchemaID)
	}
	out := d.projection
	if out == nil {
		out = make([]int, d.full.NumFields())
		for i := range out {
			out[i] = i
		}
	}
	p := &pastDecoder{cols: make([]int, len(out)), pad: make([]any, len(out))}
	var have []int
	for i, c := range out {
		p.cols[i] = -1
		if c < k {
			p.cols[i] = len(have)
			have = append(have, c)
		} else {
			p.pad[i] = d.info.Schema.Columns[c].PadValue()
		}
	}
	if len(have) > 0 {
		fields := d.full.Fields()[:k]
		md := d.full.Metadata()
		if p.dec, err = logformat.NewRecordDecoder(arrow.NewSchema(fields, &md), have, d.mem); err != nil {
			return nil, nil, err
		}
	}
	if d.past == nil {
		d.past = map[int16]*pastDecoder{}
	}
	d.past[id] = p
	return nil, p, nil
}

// Projects reports whether the decoder of schema id reads only some of a
// batch's columns (see logformat.RecordDecoder.Projects).
func (d *batchDecoders) Projects(id int16) bool {
	cur, past, err := d.forSchema(id)
	switch {
	case err != nil:
		return false
	case past != nil:
		return past.dec != nil && past.dec.Projects()
	}
	return cur.Projects()
}

// BodyRanges is logformat.RecordDecoder.BodyRanges for a batch of schema
// id, which Projects reported true for.
func (d *batchDecoders) BodyRanges(id int16, prefix []byte) ([][2]int64, error) {
	cur, past, err := d.forSchema(id)
	if err != nil {
		return nil, err
	}
	if past != nil {
		return past.dec.BodyRanges(prefix)
	}
	return cur.BodyRanges(prefix)
}

// Decode decodes the records message of a batch of schema id holding rows
// rows.
func (d *batchDecoders) Decode(id int16, msg *memory.Buffer, rows int) (arrow.RecordBatch, error) {
	cur, past, err := d.forSchema(id)
	if err != nil {
		return nil, err
	}
	if past == nil {
		return cur.Decode(msg)
	}
	var got arrow.RecordBatch
	if past.dec != nil {
		if got, err = past.dec.Decode(msg); err != nil {
			return nil, err
		}
		defer got.Release()
		rows = int(got.NumRows())
	}
	out := d.cur.Schema()
	cols := make([]arrow.Array, len(past.cols))
	for i, c := range past.cols {
		if c >= 0 {
			cols[i] = got.Column(c)
			cols[i].Retain()
		} else if cols[i], err = padArray(d.mem, out.Field(i).Type, d.info.Schema.Columns[d.tableColumn(i)].Type, past.pad[i], rows); err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, err
		}
	}
	rec := array.NewRecordBatch(out, cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// Release releases the decoders.
func (d *batchDecoders) Release() {
	d.cur.Release()
	for _, p := range d.past {
		if p.dec != nil {
			p.dec.Release()
		}
	}
	d.past = nil
}

// tableColumn is the table column of output column i.
func (d *batchDecoders) tableColumn(i int) int {
	if d.projection == nil {
		return i
	}
	return d.projection[i]
}

// padArray is a column of rows copies of v (of type t, Arrow type dt): a
// column added after the rows were stored, as they read it.
func padArray(mem memory.Allocator, dt arrow.DataType, t metadata.DataType, v any, rows int) (arrow.Array, error) {
	if v == nil {
		return array.MakeArrayOfNull(mem, dt, rows), nil
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(rows)
	for range rows {
		if err := metadata.AppendValue(b, t, v); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}
