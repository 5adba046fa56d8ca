package query

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// AppendRecord writes the rows of rec into table (qualified, or in the
// session's database), as AppendArrow documents: appended to a log table,
// upserted into a primary-key table, or buffered in the transaction. It
// neither retains nor releases rec.
func (s *Session) AppendRecord(ctx context.Context, table string, rec arrow.RecordBatch) (int64, error) {
	if rec == nil {
		return 0, fmt.Errorf("AppendArrow: nil record: %w", metadata.ErrInvalidValue)
	}
	path := metadata.TablePath{Database: s.Database, Table: table}
	if db, t, ok := strings.Cut(table, "."); ok {
		path = metadata.TablePath{Database: db, Table: t}
	}
	eng := s.Engine
	info, err := eng.TableInfo(ctx, path)
	if err != nil {
		return 0, err
	}
	cols := info.Schema.Columns
	src := make([]int, len(cols)) // table column -> record column, or -1
	for i := range src {
		src[i] = -1
	}
	fields := rec.Schema().Fields()
	for j, f := range fields {
		i := info.Schema.ColumnIndex(f.Name)
		if i < 0 {
			return 0, fmt.Errorf("AppendArrow: table %s has no column %s: %w", path, f.Name, metadata.ErrInvalidValue)
		}
		if src[i] >= 0 {
			return 0, fmt.Errorf("AppendArrow: column %s appears twice in the record: %w", f.Name, metadata.ErrInvalidValue)
		}
		if want := cols[i].Type.ArrowType(); !arrow.TypeEqual(f.Type, want) {
			return 0, fmt.Errorf("AppendArrow: column %s is %s in the record but %s (%s) in table %s: %w",
				f.Name, f.Type, want, cols[i].Type, path, metadata.ErrInvalidValue)
		}
		src[i] = j
	}
	for i, c := range cols {
		if src[i] < 0 && c.NotNull {
			return 0, fmt.Errorf("AppendArrow: the record lacks NOT NULL column %s of table %s: %w", c.Name, path, metadata.ErrConstraint)
		}
		if src[i] < 0 && c.Default != nil {
			return 0, fmt.Errorf("AppendArrow: the record lacks column %s of table %s, which has a DEFAULT: AppendArrow applies no defaults, the record must carry the column: %w", c.Name, path, metadata.ErrConstraint)
		}
	}
	nrows := int(rec.NumRows())
	if nrows == 0 {
		return 0, nil
	}
	if err := s.checkTxWrite("AppendArrow", path); err != nil {
		return 0, err
	}
	if !s.inTx() && storage.CanAppendRecord(&info) && inOrder(src) {
		return eng.AppendRecord(ctx, path, rec)
	}
	rows := make([][]any, nrows)
	for r := range rows {
		row := make([]any, len(cols))
		for i, col := range cols {
			if src[i] >= 0 {
				row[i] = metadata.ValueAt(rec.Column(src[i]), col.Type, r)
			}
		}
		rows[r] = row
	}
	w := storage.Write{Path: path, Kind: storage.WriteUpsert, Rows: rows}
	if !info.HasPrimaryKey() {
		w.Kind = storage.WriteAppend
	}
	if n, ok, err := s.txWrite(ctx, w, nil); ok {
		return n, err
	}
	res, err := eng.Commit(ctx, []storage.Write{w})
	if err != nil {
		return 0, err
	}
	return res[0].RowsAffected, nil
}

// inOrder reports whether every table column comes from the record column
// of the same position: the record is the table's row type as it is.
func inOrder(src []int) bool {
	for i, j := range src {
		if i != j {
			return false
		}
	}
	return true
}
