package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// memTable is a table held in memory: its description and its rows in
// schema order.
type memTable struct {
	info metadata.TableInfo
	rows [][]any
}

// memCatalog drives the golden tests: tables created and filled by SQL,
// queried through sqlplan and this package, without an engine.
type memCatalog map[metadata.TablePath]*memTable

func (c memCatalog) TableInfo(_ context.Context, p metadata.TablePath) (metadata.TableInfo, error) {
	if t, ok := c[p]; ok {
		return t.info, nil
	}
	return metadata.TableInfo{}, fmt.Errorf("table %s: %w", p, metadata.ErrNotFound)
}

func (c memCatalog) exec(t *testing.T, sql string) error {
	st, err := sqlplan.Parse(sql)
	if err != nil {
		return err
	}
	switch x := st.(type) {
	case *sqlplan.CreateTable:
		desc := x.Table
		if desc.Path.Database == "" {
			desc.Path.Database = metadata.DefaultDatabase
		}
		info, err := metadata.NewTableInfo(desc, int64(len(c)+1), 1, time.Unix(0, 0))
		if err != nil {
			return err
		}
		c[info.Path] = &memTable{info: info}
		return nil
	case *sqlplan.Insert:
		plan, err := sqlplan.BindInsert(context.Background(), x, c, "", nil)
		if err != nil {
			return err
		}
		tbl := c[plan.Table.Path]
		tbl.rows = append(tbl.rows, plan.Rows...)
		return nil
	}
	return fmt.Errorf("statement %s: %w", sql, metadata.ErrUnsupported)
}

// records cuts the table's rows, projected to columns, into batches of
// per rows; an empty projection gives records with rows and no columns.
func (tbl *memTable) records(t *testing.T, mem memory.Allocator, columns []int, per int) []arrow.RecordBatch {
	cols := make([]metadata.Column, len(columns))
	for i, c := range columns {
		cols[i] = tbl.info.Schema.Columns[c]
	}
	schema := metadata.ArrowSchema(cols)
	var out []arrow.RecordBatch
	for start := 0; start < len(tbl.rows); start += per {
		end := min(start+per, len(tbl.rows))
		if len(columns) == 0 {
			out = append(out, array.NewRecordBatch(schema, nil, int64(end-start)))
			continue
		}
		b := array.NewRecordBuilder(mem, schema)
		for _, r := range tbl.rows[start:end] {
			for i, c := range columns {
				if err := metadata.AppendValue(b.Field(i), cols[i].Type, r[c]); err != nil {
					t.Fatal(err)
				}
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

// runQuery binds sql against the catalog and runs it through Build,
// returning the output as text: a header of names and types, then one
// line per row.
func (c memCatalog) runQuery(t *testing.T, sql string, per int, opts Options) (string, error) {
	st, err := sqlplan.Parse(sql)
	if err != nil {
		return "", err
	}
	sel, ok := st.(*sqlplan.Select)
	if !ok {
		return "", fmt.Errorf("not a query: %s", sql)
	}
	sp, err := sqlplan.BindSelect(context.Background(), sel, c, "fluss", nil)
	if err != nil {
		return "", err
	}
	if opts.Allocator == nil {
		// Every buffer must be released; large tests pass their own
		// allocator, as the checked one records a stack per allocation.
		checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer checked.AssertSize(t, 0)
		opts.Allocator = checked
	}
	mem := opts.Allocator
	var src *sliceSource
	var layout Layout
	if sp.From {
		tbl := c[sp.Table.Path]
		src = &sliceSource{recs: tbl.records(t, mem, sp.Columns, per)}
		layout = NewLayout(len(sp.Table.Schema.Columns), sp.Columns)
	} else {
		src = &sliceSource{recs: []arrow.RecordBatch{array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)}}
	}
	q := Query{Filter: sqlplan.Conjuncts(sp.Where), GroupBy: sp.GroupBy, Having: sp.Having,
		Distinct: sp.Distinct, OrderBy: sp.OrderBy, Offset: sp.Offset, Limit: sp.Limit}
	var b strings.Builder
	types := make([]metadata.DataType, len(sp.Output))
	for i, o := range sp.Output {
		q.Output = append(q.Output, o.Expr)
		q.Names = append(q.Names, o.Name)
		types[i] = resultType(o.Expr.Type())
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s %s", o.Name, types[i])
	}
	b.WriteString("\n")
	op, err := Build(Scan(src), q, layout, opts)
	if err != nil {
		src.Close()
		return "", err
	}
	defer op.Close()
	for {
		batch, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		for i := 0; i < batch.NumRows(); i++ {
			r := batch.Row(i)
			for c := range sp.Output {
				if c > 0 {
					b.WriteString(" | ")
				}
				v := metadata.ValueAt(batch.Rec.Column(c), types[c], r)
				if s, ok := v.(string); ok {
					b.WriteString(strconv.Quote(s))
				} else {
					b.WriteString(metadata.FormatValue(types[c], v))
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// TestQueries runs the golden query tests in testdata/query:
//
//	exec                          statements (CREATE TABLE, INSERT), one per line
//	query [batch=n] [memory=n]    a SELECT; prints a header and the rows, or the error
func TestQueries(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		cat := memCatalog{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				for _, line := range strings.Split(d.Input, "\n") {
					if strings.TrimSpace(line) == "" {
						continue
					}
					if err := cat.exec(t, line); err != nil {
						return "error: " + err.Error() + "\n"
					}
				}
				return ""
			case "query":
				per := 3
				var opts Options
				for _, a := range d.CmdArgs {
					switch a.Key {
					case "batch":
						n, err := strconv.Atoi(a.Vals[0])
						require.NoError(t, err)
						per = n
					case "memory":
						n, err := strconv.ParseInt(a.Vals[0], 10, 64)
						require.NoError(t, err)
						opts.MemoryLimit = n
					}
				}
				out, err := cat.runQuery(t, d.Input, per, opts)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				return out
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}
