package main

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss"
)

// arrowBatchRows is the size of the record batches fluss's bulk paths
// write and read.
const arrowBatchRows = 64 * 1024

// flussArrowSchema is t's columns as AppendArrow takes them, plus day for
// tp when withDay.
func flussArrowSchema(withDay bool) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}
	if withDay {
		fields = append(fields, arrow.Field{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// appendArrow writes rowAt(i) for i in [from, to) into table through
// fluss.AppendArrow, building each record batch from the generated rows
// inside the timed work (as DuckDB's Appender is fed row by row).
func (e *flussEngine) appendArrow(ctx context.Context, table string, withDay bool, from, to int64, rowAt func(int64) row) error {
	conn, err := e.sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	b := array.NewRecordBuilder(memory.DefaultAllocator, flussArrowSchema(withDay))
	defer b.Release()
	id := b.Field(0).(*array.Int64Builder)
	ts := b.Field(1).(*array.TimestampBuilder)
	k := b.Field(2).(*array.Int32Builder)
	v := b.Field(3).(*array.Float64Builder)
	s := b.Field(4).(*array.StringBuilder)
	for lo := from; lo < to; lo += arrowBatchRows {
		hi := min(lo+arrowBatchRows, to)
		for i := lo; i < hi; i++ {
			r := rowAt(i)
			id.Append(r.id)
			ts.Append(arrow.Timestamp(r.ts.UnixMilli()))
			k.Append(r.k)
			v.Append(r.v)
			s.Append(r.s)
			if withDay {
				b.Field(5).(*array.Date32Builder).Append(arrow.Date32FromTime(r.day))
			}
		}
		rec := b.NewRecordBatch()
		n, err := fluss.AppendArrow(ctx, conn, table, rec)
		rec.Release()
		if err != nil {
			return err
		}
		if n != hi-lo {
			return fmt.Errorf("AppendArrow into %s wrote %d rows, want %d", table, n, hi-lo)
		}
	}
	return nil
}

func (e *flussEngine) appendBulk(ctx context.Context, g gen, rows int) (time.Duration, error) {
	e.w7++
	table := fmt.Sprintf("w7_%d", e.w7)
	if _, err := e.sqlDB.ExecContext(ctx, `CREATE TABLE `+table+` (`+flussColumns+`) WITH ('bucket.num' = '4')`); err != nil {
		return 0, err
	}
	defer e.sqlDB.ExecContext(ctx, `DROP TABLE `+table)
	start := time.Now()
	err := e.appendArrow(ctx, table, false, 0, int64(rows), func(i int64) row { return g.at(i, 0) })
	return time.Since(start), err
}

// appendReady builds rows rows of g as record batches, then times only
// writing them with AppendArrow into a fresh table.
func (e *flussEngine) appendReady(ctx context.Context, g gen, rows int) (time.Duration, error) {
	e.w7++
	table := fmt.Sprintf("w7_%d", e.w7)
	if _, err := e.sqlDB.ExecContext(ctx, `CREATE TABLE `+table+` (`+flussColumns+`) WITH ('bucket.num' = '4')`); err != nil {
		return 0, err
	}
	defer e.sqlDB.ExecContext(ctx, `DROP TABLE `+table)
	recs := readyBatches(g, 0, int64(rows))
	defer releaseAll(recs)
	start := time.Now()
	err := e.appendBatches(ctx, table, recs)
	return time.Since(start), err
}

// readyBatches builds the rows [from, to) of g (generation 0) as record
// batches of arrowBatchRows rows; the caller releases them.
func readyBatches(g gen, from, to int64) []arrow.RecordBatch {
	var recs []arrow.RecordBatch
	b := array.NewRecordBuilder(memory.DefaultAllocator, flussArrowSchema(false))
	defer b.Release()
	for lo := from; lo < to; lo += arrowBatchRows {
		for i := lo; i < min(lo+arrowBatchRows, to); i++ {
			r := g.at(i, 0)
			b.Field(0).(*array.Int64Builder).Append(r.id)
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixMilli()))
			b.Field(2).(*array.Int32Builder).Append(r.k)
			b.Field(3).(*array.Float64Builder).Append(r.v)
			b.Field(4).(*array.StringBuilder).Append(r.s)
		}
		recs = append(recs, b.NewRecordBatch())
	}
	return recs
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// appendBatches writes recs into table with AppendArrow, each call
// durable when it returns, and checks every row was written.
func (e *flussEngine) appendBatches(ctx context.Context, table string, recs []arrow.RecordBatch) error {
	conn, err := e.sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var n, want int64
	for _, rec := range recs {
		m, err := fluss.AppendArrow(ctx, conn, table, rec)
		if err != nil {
			return err
		}
		n += m
		want += rec.NumRows()
	}
	if n != want {
		return fmt.Errorf("AppendArrow into %s wrote %d rows, want %d", table, n, want)
	}
	return nil
}

// arrowScan reads t through fluss.QueryArrow.
func (e *flussEngine) arrowScan(ctx context.Context) (int64, error) {
	conn, err := e.sqlDB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	rr, err := fluss.QueryArrow(ctx, conn, w1Query)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	return n, rr.Err()
}
