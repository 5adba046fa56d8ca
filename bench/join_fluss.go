package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss"
)

// loadJoin writes the join tables through AppendArrow, as t is written:
// f, f10 and jk are log tables, d1 and d2 key tables.
func (e *flussEngine) loadJoin(ctx context.Context, j joinSet, log func(string, int64, time.Duration)) error {
	for _, q := range []string{
		`CREATE TABLE f (id BIGINT, a INT, b INT, v DOUBLE) WITH ('bucket.num' = '4')`,
		`CREATE TABLE f10 (id BIGINT, a INT, b INT, v DOUBLE) WITH ('bucket.num' = '4')`,
		`CREATE TABLE d1 (id BIGINT, seg INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '4')`,
		`CREATE TABLE d2 (id BIGINT, region INT, grp INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '4')`,
		`CREATE TABLE jk (id BIGINT) WITH ('bucket.num' = '4')`,
	} {
		if _, err := e.sqlDB.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	i64 := arrow.PrimitiveTypes.Int64
	i32 := arrow.PrimitiveTypes.Int32
	fact := []arrow.Field{{Name: "id", Type: i64, Nullable: true}, {Name: "a", Type: i32, Nullable: true},
		{Name: "b", Type: i32, Nullable: true}, {Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}
	fillFact := func(b *array.RecordBuilder, i int64) {
		r := j.factAt(i)
		b.Field(0).(*array.Int64Builder).Append(r.id)
		b.Field(1).(*array.Int32Builder).Append(r.a)
		b.Field(2).(*array.Int32Builder).Append(r.b)
		b.Field(3).(*array.Float64Builder).Append(r.v)
	}
	loads := []struct {
		table  string
		rows   int64
		fields []arrow.Field
		fill   func(b *array.RecordBuilder, i int64)
	}{
		{"f", j.fact, fact, fillFact},
		{"f10", j.small, fact, fillFact},
		{"d1", j.dim1, []arrow.Field{{Name: "id", Type: i64}, {Name: "seg", Type: i32, Nullable: true}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}},
			func(b *array.RecordBuilder, i int64) {
				b.Field(0).(*array.Int64Builder).Append(i)
				b.Field(1).(*array.Int32Builder).Append(dim1Seg(i))
				b.Field(2).(*array.StringBuilder).Append(dim1Name(i))
			}},
		{"d2", j.dim2, []arrow.Field{{Name: "id", Type: i64}, {Name: "region", Type: i32, Nullable: true}, {Name: "grp", Type: i32, Nullable: true}},
			func(b *array.RecordBuilder, i int64) {
				b.Field(0).(*array.Int64Builder).Append(i)
				b.Field(1).(*array.Int32Builder).Append(dim2Region(i))
				b.Field(2).(*array.Int32Builder).Append(dim2Grp(i))
			}},
		{"jk", j.keys, []arrow.Field{{Name: "id", Type: i64, Nullable: true}},
			func(b *array.RecordBuilder, i int64) { b.Field(0).(*array.Int64Builder).Append(j.key(i)) }},
	}
	for _, l := range loads {
		start := time.Now()
		if err := e.appendRecords(ctx, l.table, arrow.NewSchema(l.fields, nil), l.rows, l.fill); err != nil {
			return fmt.Errorf("load %s: %w", l.table, err)
		}
		log("load "+l.table, l.rows, time.Since(start))
	}
	return nil
}

// appendRecords writes rows 0..rows-1 of table, each filled in by fill,
// in record batches through fluss.AppendArrow.
func (e *flussEngine) appendRecords(ctx context.Context, table string, schema *arrow.Schema, rows int64,
	fill func(b *array.RecordBuilder, i int64)) error {
	conn, err := e.sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for lo := int64(0); lo < rows; lo += arrowBatchRows {
		hi := min(lo+arrowBatchRows, rows)
		for i := lo; i < hi; i++ {
			fill(b, i)
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

// hashJoinQuery is J2 with fluss made to read the whole key table into a
// hash join instead of looking the keys up. fluss has no switch for that;
// a join key that is an expression of the key column (kv.id + 0) is not
// the key itself, so no lookup can serve it.
func (e *flussEngine) hashJoinQuery(q string) (string, error) {
	h := strings.Replace(q, "ON kv.id = jk.id", "ON kv.id + 0 = jk.id", 1)
	if h == q {
		return "", fmt.Errorf("J2's query has no ON kv.id = jk.id to rewrite: %s", q)
	}
	return h, nil
}

// joinStrategy is the line of fluss's EXPLAIN of q that says how its
// join runs ([Lookup: ...] or [Build: ...]).
func (e *flussEngine) joinStrategy(ctx context.Context, q string) (string, error) {
	rows, err := e.sqlDB.QueryContext(ctx, "EXPLAIN "+q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		if strings.Contains(line, "Join:") {
			return strings.TrimSpace(line), nil
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("EXPLAIN of %s shows no join", q)
}
