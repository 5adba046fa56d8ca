package fluss_test

import (
	"database/sql"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// anyScan marks a column whose ScanType is the interface any.
type anyScan struct{}

var anyType anyScan

// Every data type, NOT NULL and nullable: the column metadata database/sql
// exposes, and a value of the type scanned into a new variable of the
// column's ScanType (what generic scanners such as sqlx and GORM do).
func TestColumnTypesOfEveryType(t *testing.T) {
	db, _ := openDB(t)
	type length struct {
		n  int64
		ok bool
	}
	type decimal struct {
		p, s int64
		ok   bool
	}
	for i, tc := range []struct {
		typ      string
		value    string // a literal of the type
		name     string // DatabaseTypeName
		scan     any    // ScanType of the NOT NULL column, as a zero value
		nullScan any    // ScanType of the nullable column
		length   length
		decimal  decimal
	}{
		{"BOOLEAN", "true", "BOOLEAN", false, sql.NullBool{}, length{}, decimal{}},
		{"TINYINT", "-7", "TINYINT", int64(0), sql.NullInt64{}, length{}, decimal{}},
		{"SMALLINT", "300", "SMALLINT", int64(0), sql.NullInt64{}, length{}, decimal{}},
		{"INT", "70000", "INT", int64(0), sql.NullInt64{}, length{}, decimal{}},
		{"BIGINT", "9000000000", "BIGINT", int64(0), sql.NullInt64{}, length{}, decimal{}},
		{"FLOAT", "1.5", "FLOAT", float64(0), sql.NullFloat64{}, length{}, decimal{}},
		{"DOUBLE", "2.25", "DOUBLE", float64(0), sql.NullFloat64{}, length{}, decimal{}},
		{"DECIMAL(12, 3)", "123456789.123", "DECIMAL", "", sql.NullString{}, length{}, decimal{12, 3, true}},
		{"CHAR(3)", "'abc'", "CHAR", "", sql.NullString{}, length{3, true}, decimal{}},
		{"STRING", "'héllo'", "STRING", "", sql.NullString{}, length{math.MaxInt64, true}, decimal{}},
		{"BINARY(2)", "x'0102'", "BINARY", []byte(nil), []byte(nil), length{2, true}, decimal{}},
		{"BYTES", "x'ff'", "BYTES", []byte(nil), []byte(nil), length{math.MaxInt64, true}, decimal{}},
		{"DATE", "'2026-03-04'", "DATE", time.Time{}, sql.NullTime{}, length{}, decimal{}},
		{"TIME(3)", "'05:06:07.891'", "TIME", time.Time{}, sql.NullTime{}, length{}, decimal{3, 0, true}},
		{"TIMESTAMP(6)", "'2026-03-04 05:06:07.123456'", "TIMESTAMP", time.Time{}, sql.NullTime{}, length{}, decimal{6, 0, true}},
		{"TIMESTAMP_LTZ(3)", "'2026-03-04 05:06:07.125'", "TIMESTAMP_LTZ", time.Time{}, sql.NullTime{}, length{}, decimal{3, 0, true}},
		{"ARRAY<INT>", "ARRAY(1, 2)", "ARRAY<INT>", []any(nil), anyType, length{}, decimal{}},
		{"MAP<STRING, INT>", "MAP('a', 1)", "MAP<STRING, INT>", map[any]any(nil), anyType, length{}, decimal{}},
		{"ROW<a INT, b STRING>", "ROW(1, 'x')", "ROW<a INT, b STRING>", map[string]any(nil), anyType, length{}, decimal{}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			table := fmt.Sprintf("t%d", i)
			mustExec(t, db, fmt.Sprintf(`CREATE TABLE %s (nn %s NOT NULL, n %s)`, table, tc.typ, tc.typ))
			mustExec(t, db, fmt.Sprintf(`INSERT INTO %s VALUES (%s, %s), (%s, NULL)`, table, tc.value, tc.value, tc.value))
			rows, err := db.Query(`SELECT nn, n FROM ` + table)
			require.NoError(t, err)
			defer rows.Close()
			cts, err := rows.ColumnTypes()
			require.NoError(t, err)
			require.Len(t, cts, 2)
			for c, want := range []any{tc.scan, tc.nullScan} {
				ct := cts[c]
				require.Equal(t, tc.name, ct.DatabaseTypeName(), ct.Name())
				wantType := reflect.TypeOf(want)
				if _, ok := want.(anyScan); ok {
					wantType = reflect.TypeFor[any]()
				}
				require.Equal(t, wantType, ct.ScanType(), ct.Name())
				nullable, ok := ct.Nullable()
				require.True(t, ok)
				require.Equal(t, c == 1, nullable, ct.Name())
				n, ok := ct.Length()
				require.Equal(t, tc.length, length{n, ok}, ct.Name())
				p, s, ok := ct.DecimalSize()
				require.Equal(t, tc.decimal, decimal{p, s, ok}, ct.Name())
			}
			for rows.Next() {
				dest := []any{reflect.New(cts[0].ScanType()).Interface(), reflect.New(cts[1].ScanType()).Interface()}
				require.NoError(t, rows.Scan(dest...))
				require.False(t, reflect.ValueOf(dest[0]).Elem().IsZero(), "the NOT NULL column scanned as the zero value")
			}
			require.NoError(t, rows.Err())
		})
	}
}
