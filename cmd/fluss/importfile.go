package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss"
	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
)

// inferSample is how many CSV rows decide the column types of a table
// .import creates.
const inferSample = 1000

// dotImport loads a CSV or Parquet file (told apart by the file's
// extension) into a table, creating the table from the file when it does
// not exist. Rows go in through fluss.AppendArrow in batches, each
// committed on its own: an error part-way leaves the batches before it
// loaded, and says how many rows that was.
func (s *shell) dotImport(ctx context.Context, args []string) error {
	path, table := args[0], args[1]
	var (
		rows int64
		err  error
	)
	start := time.Now()
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".parq", ".pq":
		rows, err = s.importParquet(ctx, path, table)
	default:
		rows, err = s.importCSV(ctx, path, table)
	}
	if err != nil {
		if rows > 0 {
			return fmt.Errorf("%w (%s were loaded before it)", err, plural(rows, "row"))
		}
		return err
	}
	if s.timer {
		fmt.Fprintf(s.out, "%s imported in %s\n", plural(rows, "row"), elapsed(start))
	}
	return nil
}

// tableSchema is the Arrow schema of a table's columns, the types
// AppendArrow wants; found is false when the table does not exist.
func (s *shell) tableSchema(ctx context.Context, table string) (schema *arrow.Schema, found bool, err error) {
	rr, err := fluss.QueryArrow(ctx, s.conn, "SELECT * FROM "+quoteName(table)+" LIMIT 0")
	if errors.Is(err, fluss.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer rr.Release()
	return rr.Schema(), true, nil
}

// targetSchema matches the file's column names to the table's columns
// and returns the record schema to append: the file's columns, in its
// order, each with its table column's name and Arrow type.
func targetSchema(table string, tableSchema *arrow.Schema, names []string) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(names))
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		j := -1
		for k, f := range tableSchema.Fields() {
			if strings.EqualFold(f.Name, n) {
				j = k
				break
			}
		}
		if j < 0 {
			return nil, fmt.Errorf("table %s has no column %q of the file", table, n)
		}
		tf := tableSchema.Field(j)
		if seen[tf.Name] {
			return nil, fmt.Errorf("the file has column %q twice", n)
		}
		seen[tf.Name] = true
		fields[i] = arrow.Field{Name: tf.Name, Type: tf.Type, Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

// appendName is the table name as AppendArrow takes it: t or db.t,
// without quotes.
func appendName(table string) string { return strings.ReplaceAll(table, "`", "") }

// importCSV loads a CSV file whose first row names the columns. An empty
// field is NULL.
func (s *shell) importCSV(ctx context.Context, path, table string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	counter := &countingReader{r: f}
	cr := csv.NewReader(bufio.NewReaderSize(counter, 1<<20))
	header, err := cr.Read()
	if err == io.EOF {
		return 0, fmt.Errorf("%s is empty: a CSV file starts with a header row naming the columns", path)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	for i, h := range header {
		if h = strings.TrimSpace(h); h == "" {
			h = fmt.Sprintf("column%d", i+1)
		}
		header[i] = h
	}
	var sample [][]string
	var sampleLines []int
	for len(sample) < inferSample {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		sample, sampleLines = append(sample, rec), append(sampleLines, line)
	}
	tableSchema, found, err := s.tableSchema(ctx, table)
	if err != nil {
		return 0, err
	}
	if !found {
		types := inferTypes(header, sample)
		if err := s.createFrom(ctx, table, header, types, nil); err != nil {
			return 0, err
		}
		if tableSchema, _, err = s.tableSchema(ctx, table); err != nil {
			return 0, err
		}
	}
	schema, err := targetSchema(table, tableSchema, header)
	if err != nil {
		return 0, err
	}
	ld := s.newLoader(ctx, table, schema, path, st.Size())
	defer ld.release()
	for i, rec := range sample {
		if err := ld.appendCSV(rec, sampleLines[i], header); err != nil {
			return ld.loaded, err
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ld.loaded, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		if err := ld.appendCSV(rec, line, header); err != nil {
			return ld.loaded, err
		}
		if ld.pending() >= s.batchRows {
			if err := ld.flush(); err != nil {
				return ld.loaded, err
			}
			ld.bar.update(counter.n, ld.loaded)
		}
	}
	if err := ld.flush(); err != nil {
		return ld.loaded, err
	}
	ld.bar.finish(st.Size(), ld.loaded)
	return ld.loaded, nil
}

// createFrom creates table with the given columns; notNull may be nil.
func (s *shell) createFrom(ctx context.Context, table string, names, types []string, notNull []bool) error {
	defs := make([]string, len(names))
	for i, n := range names {
		// Always quoted: file headers hold words like "date" or "order".
		defs[i] = metadata.Backquote(n) + " " + types[i]
		if notNull != nil && notNull[i] {
			defs[i] += " NOT NULL"
		}
	}
	text := fmt.Sprintf("CREATE TABLE %s (%s)", quoteName(table), strings.Join(defs, ", "))
	if _, err := s.conn.ExecContext(ctx, text); err != nil {
		return fmt.Errorf("creating table %s from the file: %w", table, err)
	}
	fmt.Fprintf(s.out, "created table %s (%s)\n", table, strings.Join(defs, ", "))
	return nil
}

// inferTypes picks each column's type from the sample's non-empty
// values: the first of BIGINT, DOUBLE, BOOLEAN, DATE and TIMESTAMP that
// reads all of them, else STRING.
func inferTypes(header []string, sample [][]string) []string {
	types := make([]string, len(header))
	for c := range header {
		cands := []string{"BIGINT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP"}
		seen := false
		for _, rec := range sample {
			if c >= len(rec) || rec[c] == "" {
				continue
			}
			seen = true
			v := rec[c]
			kept := cands[:0]
			for _, t := range cands {
				if fitsType(t, v) {
					kept = append(kept, t)
				}
			}
			if cands = kept; len(cands) == 0 {
				break
			}
		}
		types[c] = "STRING"
		if seen && len(cands) > 0 {
			types[c] = cands[0]
		}
	}
	return types
}

func fitsType(typ, v string) bool {
	var err error
	switch typ {
	case "BIGINT":
		_, err = strconv.ParseInt(v, 10, 64)
	case "DOUBLE":
		_, err = strconv.ParseFloat(v, 64)
	case "BOOLEAN":
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return false
		}
	case "DATE":
		_, err = time.Parse(time.DateOnly, v)
	case "TIMESTAMP":
		_, err = parseTimestamp(v)
	}
	return err == nil
}

// timestampLayouts are the forms a CSV timestamp may take; fractions of
// a second after the seconds are read in any of them. A value with a
// zone is converted to UTC.
var timestampLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	time.RFC3339Nano,
	"2006-01-02 15:04",
	"2006-01-02T15:04",
}

func parseTimestamp(v string) (time.Time, error) {
	for _, l := range timestampLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp (2006-01-02 15:04:05[.fff])", v)
}

// parseTimeOfDay reads "15:04:05[.fff]" as the time since midnight.
func parseTimeOfDay(v string) (time.Duration, error) {
	t, err := time.Parse(time.TimeOnly, v)
	if err != nil {
		return 0, err
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute +
		time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond()), nil
}

// countingReader counts the bytes read through it, for the progress bar.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// loader collects rows into Arrow records of the target schema and
// appends them to the table.
type loader struct {
	ctx    context.Context
	s      *shell
	table  string
	b      *array.RecordBuilder
	bar    *progressBar
	loaded int64
}

// newLoader starts loading the file at path into table; the progress bar
// counts up to total (bytes or rows) and is drawn when the file is large
// and the error output a terminal.
func (s *shell) newLoader(ctx context.Context, table string, schema *arrow.Schema, path string, total int64) *loader {
	s.out.Flush()
	large := false
	if st, err := os.Stat(path); err == nil {
		large = st.Size() >= s.progressMin
	}
	return &loader{
		ctx: ctx, s: s, table: table,
		b:   array.NewRecordBuilder(memory.DefaultAllocator, schema),
		bar: newProgressBar(s.errOut, s.errTTY && large, "importing "+filepath.Base(path), total),
	}
}

func (l *loader) release() {
	l.bar.abandon()
	l.b.Release()
}

func (l *loader) pending() int { return l.b.Field(0).Len() }

// appendCSV adds one CSV record; line is its line in the file, for
// errors.
func (l *loader) appendCSV(rec []string, line int, header []string) error {
	for i, v := range rec {
		if err := appendText(l.b.Field(i), v); err != nil {
			return fmt.Errorf("line %d, column %s: %w", line, header[i], err)
		}
	}
	return nil
}

// flush appends the rows collected so far.
func (l *loader) flush() error {
	if l.pending() == 0 {
		return nil
	}
	rec := l.b.NewRecordBatch()
	defer rec.Release()
	return l.appendRecord(rec)
}

func (l *loader) appendRecord(rec arrow.RecordBatch) error {
	if _, err := fluss.AppendArrow(l.ctx, l.s.conn, appendName(l.table), rec); err != nil {
		return err
	}
	l.loaded += rec.NumRows()
	return nil
}

// appendText appends the CSV text v to a builder of the column's Arrow
// type; an empty field is NULL.
func appendText(b array.Builder, v string) error {
	if v == "" {
		b.AppendNull()
		return nil
	}
	bad := func(err error) error {
		return fmt.Errorf("%q does not fit %s: %w", v, b.Type(), err)
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		n, err := strconv.ParseInt(v, 10, 8)
		if err != nil {
			return bad(err)
		}
		b.Append(int8(n))
	case *array.Int16Builder:
		n, err := strconv.ParseInt(v, 10, 16)
		if err != nil {
			return bad(err)
		}
		b.Append(int16(n))
	case *array.Int32Builder:
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return bad(err)
		}
		b.Append(int32(n))
	case *array.Int64Builder:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad(err)
		}
		b.Append(n)
	case *array.Float32Builder:
		f, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return bad(err)
		}
		b.Append(float32(f))
	case *array.Float64Builder:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad(err)
		}
		b.Append(f)
	case *array.BooleanBuilder:
		t, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			return bad(err)
		}
		b.Append(t)
	case *array.StringBuilder:
		b.Append(v)
	case *array.BinaryBuilder:
		b.Append([]byte(v))
	case *array.FixedSizeBinaryBuilder:
		w := b.Type().(*arrow.FixedSizeBinaryType).ByteWidth
		if len(v) != w {
			return bad(fmt.Errorf("%d bytes, want %d", len(v), w))
		}
		b.Append([]byte(v))
	case *array.Date32Builder:
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return bad(err)
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.TimestampBuilder:
		t, err := parseTimestamp(v)
		if err != nil {
			return bad(err)
		}
		ts, err := arrow.TimestampFromTime(t, b.Type().(*arrow.TimestampType).Unit)
		if err != nil {
			return bad(err)
		}
		b.Append(ts)
	case *array.Time32Builder:
		d, err := parseTimeOfDay(v)
		if err != nil {
			return bad(err)
		}
		b.Append(arrow.Time32(d / b.Type().(*arrow.Time32Type).Unit.Multiplier()))
	case *array.Time64Builder:
		d, err := parseTimeOfDay(v)
		if err != nil {
			return bad(err)
		}
		b.Append(arrow.Time64(d / b.Type().(*arrow.Time64Type).Unit.Multiplier()))
	case *array.Decimal128Builder:
		dt := b.Type().(*arrow.Decimal128Type)
		n, err := decimal128.FromString(v, dt.Precision, dt.Scale)
		if err != nil {
			return bad(err)
		}
		b.Append(n)
	default:
		return fmt.Errorf("a CSV field cannot be loaded into a column of Arrow type %s", b.Type())
	}
	return nil
}

// importParquet loads a Parquet file, creating the table from the file's
// schema when it does not exist. Columns whose Arrow type differs from
// the table's (a timestamp unit, an unsigned integer) are cast, and a
// value the cast would change is an error.
func (s *shell) importParquet(ctx context.Context, path, table string) (int64, error) {
	rr, total, err := lake.OpenParquetFile(ctx, path, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	// The system columns of a lake file are the table's bookkeeping, not
	// data: loading a lake file into a table leaves them out.
	var (
		names  []string
		fields []arrow.Field
		src    []int
	)
	for i, f := range rr.Schema().Fields() {
		if lakeSystemColumns[strings.ToLower(f.Name)] {
			continue
		}
		names, fields, src = append(names, f.Name), append(fields, f), append(src, i)
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("%s has no columns", path)
	}
	tableSchema, found, err := s.tableSchema(ctx, table)
	if err != nil {
		return 0, err
	}
	if !found {
		types := make([]string, len(names))
		notNull := make([]bool, len(names))
		for i, f := range fields {
			if types[i], err = sqlType(f.Type); err != nil {
				return 0, fmt.Errorf("%s: column %s: %w", path, f.Name, err)
			}
			notNull[i] = !f.Nullable
		}
		if err := s.createFrom(ctx, table, names, types, notNull); err != nil {
			return 0, err
		}
		if tableSchema, _, err = s.tableSchema(ctx, table); err != nil {
			return 0, err
		}
	}
	schema, err := targetSchema(table, tableSchema, names)
	if err != nil {
		return 0, err
	}
	ld := s.newLoader(ctx, table, schema, path, total)
	defer ld.release()
	var batch []arrow.RecordBatch
	var batchRows int64
	flush := func() error {
		defer func() {
			for _, r := range batch {
				r.Release()
			}
			batch, batchRows = batch[:0], 0
		}()
		if len(batch) == 0 {
			return nil
		}
		if len(batch) == 1 {
			return ld.appendRecord(batch[0])
		}
		rec, err := concatRecords(schema, batch)
		if err != nil {
			return err
		}
		defer rec.Release()
		return ld.appendRecord(rec)
	}
	for rr.Next() {
		rec, err := castRecord(ctx, schema, rr.RecordBatch(), src)
		if err != nil {
			flush()
			return ld.loaded, fmt.Errorf("%s: %w", path, err)
		}
		batch = append(batch, rec)
		batchRows += rec.NumRows()
		if batchRows >= int64(s.batchRows) {
			if err := flush(); err != nil {
				return ld.loaded, err
			}
			ld.bar.update(ld.loaded, ld.loaded)
		}
	}
	if err := rr.Err(); err != nil {
		flush()
		return ld.loaded, err
	}
	if err := flush(); err != nil {
		return ld.loaded, err
	}
	ld.bar.finish(ld.loaded, ld.loaded)
	return ld.loaded, nil
}

// lakeSystemColumns are the columns a lake file adds to a table's.
var lakeSystemColumns = map[string]bool{"__bucket": true, "__offset": true, "__timestamp": true}

// castRecord returns the columns src of rec as a record of schema,
// casting the columns whose type differs. The result is the caller's to
// release.
func castRecord(ctx context.Context, schema *arrow.Schema, rec arrow.RecordBatch, src []int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(src))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, j := range src {
		c := rec.Column(j)
		want := schema.Field(i).Type
		if arrow.TypeEqual(c.DataType(), want) {
			c.Retain()
			cols[i] = c
			continue
		}
		out, err := compute.CastArray(ctx, c, compute.SafeCastOptions(want))
		if err != nil {
			return nil, fmt.Errorf("column %s: cannot read %s as %s: %w", schema.Field(i).Name, c.DataType(), want, err)
		}
		cols[i] = out
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
}

// concatRecords joins records of one schema into one.
func concatRecords(schema *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}

// sqlType is the column type a Parquet file's Arrow type becomes in a
// table .import creates.
func sqlType(t arrow.DataType) (string, error) {
	switch t := t.(type) {
	case *arrow.BooleanType:
		return "BOOLEAN", nil
	case *arrow.Int8Type:
		return "TINYINT", nil
	case *arrow.Int16Type, *arrow.Uint8Type:
		return "SMALLINT", nil
	case *arrow.Int32Type, *arrow.Uint16Type:
		return "INT", nil
	case *arrow.Int64Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return "BIGINT", nil
	case *arrow.Float16Type, *arrow.Float32Type:
		return "FLOAT", nil
	case *arrow.Float64Type:
		return "DOUBLE", nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return "STRING", nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		return "BYTES", nil
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("BINARY(%d)", t.ByteWidth), nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale), nil
	case *arrow.Date32Type, *arrow.Date64Type:
		return "DATE", nil
	case *arrow.Time32Type:
		return fmt.Sprintf("TIME(%d)", unitDigits(t.Unit)), nil
	case *arrow.Time64Type:
		return fmt.Sprintf("TIME(%d)", unitDigits(t.Unit)), nil
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return fmt.Sprintf("TIMESTAMP_LTZ(%d)", unitDigits(t.Unit)), nil
		}
		return fmt.Sprintf("TIMESTAMP(%d)", unitDigits(t.Unit)), nil
	case *arrow.DictionaryType:
		return sqlType(t.ValueType)
	case *arrow.ListType:
		e, err := sqlType(t.Elem())
		return "ARRAY<" + e + ">", err
	case *arrow.MapType:
		k, err := sqlType(t.KeyType())
		if err != nil {
			return "", err
		}
		v, err := sqlType(t.ItemType())
		return "MAP<" + k + ", " + v + ">", err
	case *arrow.StructType:
		parts := make([]string, t.NumFields())
		for i, f := range t.Fields() {
			ft, err := sqlType(f.Type)
			if err != nil {
				return "", err
			}
			parts[i] = metadata.Backquote(f.Name) + " " + ft
		}
		return "ROW<" + strings.Join(parts, ", ") + ">", nil
	}
	return "", fmt.Errorf("no column type for Arrow type %s", t)
}

func unitDigits(u arrow.TimeUnit) int {
	switch u {
	case arrow.Second:
		return 0
	case arrow.Millisecond:
		return 3
	case arrow.Microsecond:
		return 6
	}
	return 9
}
