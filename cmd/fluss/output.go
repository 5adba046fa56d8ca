package main

import (
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Output modes of .mode.
const (
	modeTable = "table"
	modeCSV   = "csv"
	modeJSON  = "json"
	modeLine  = "line"
)

var modes = []string{modeTable, modeCSV, modeJSON, modeLine}

// column is a result column as the printers need it: its name and the
// database type name that decides how a value is written.
type column struct {
	name string
	typ  string
}

// numeric columns are right-aligned in tables and unquoted in JSON.
func (c column) numeric() bool {
	switch c.typ {
	case "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL":
		return true
	}
	return false
}

// rowSource yields a result's rows: next returns io.EOF after the last.
type rowSource struct {
	cols []column
	next func() ([]any, error)
}

// sqlSource reads rows of database/sql as the driver's values.
func sqlSource(rows *sql.Rows) (rowSource, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return rowSource{}, err
	}
	cols := make([]column, len(cts))
	for i, ct := range cts {
		cols[i] = column{name: ct.Name(), typ: ct.DatabaseTypeName()}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	next := func() ([]any, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		return vals, nil
	}
	return rowSource{cols: cols, next: next}, nil
}

// staticSource yields rows built in memory.
func staticSource(cols []column, rows [][]any) rowSource {
	i := 0
	return rowSource{cols: cols, next: func() ([]any, error) {
		if i >= len(rows) {
			return nil, io.EOF
		}
		i++
		return rows[i-1], nil
	}}
}

// printRows writes src in mode to w and returns the number of rows. A
// result without columns (a statement that returns nothing) prints
// nothing.
func printRows(w io.Writer, mode string, src rowSource) (int64, error) {
	if len(src.cols) == 0 {
		return drain(src)
	}
	switch mode {
	case modeCSV:
		return printCSV(w, src)
	case modeJSON:
		return printJSON(w, src)
	case modeLine:
		return printLine(w, src)
	}
	return printTable(w, src)
}

func drain(src rowSource) (int64, error) {
	var n int64
	for {
		if _, err := src.next(); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		n++
	}
}

// tableSample is how many rows decide the column widths of a table; rows
// after them are streamed with those widths (a wider value pushes its
// row out of line rather than holding the whole result in memory).
const tableSample = 1000

func printTable(w io.Writer, src rowSource) (int64, error) {
	cols := src.cols
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = runewidth.StringWidth(c.name)
	}
	var sample [][]string
	var n int64
	var readErr error
	for len(sample) < tableSample {
		vals, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		n++
		cells := make([]string, len(vals))
		for i, v := range vals {
			cells[i] = textValue(v, cols[i])
			widths[i] = max(widths[i], runewidth.StringWidth(cells[i]))
		}
		sample = append(sample, cells)
	}
	rule := tableRule(widths)
	fmt.Fprint(w, rule)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	writeTableRow(w, cols, widths, names, true)
	fmt.Fprint(w, rule)
	for _, cells := range sample {
		writeTableRow(w, cols, widths, cells, false)
	}
	if readErr == nil && len(sample) == tableSample {
		cells := make([]string, len(cols))
		for {
			vals, err := src.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				readErr = err
				break
			}
			n++
			for i, v := range vals {
				cells[i] = textValue(v, cols[i])
			}
			writeTableRow(w, cols, widths, cells, false)
		}
	}
	fmt.Fprint(w, rule)
	return n, readErr
}

func tableRule(widths []int) string {
	var b strings.Builder
	for _, wd := range widths {
		b.WriteString("+")
		b.WriteString(strings.Repeat("-", wd+2))
	}
	b.WriteString("+\n")
	return b.String()
}

// writeTableRow writes one row; numbers are right-aligned, except in the
// header.
func writeTableRow(w io.Writer, cols []column, widths []int, cells []string, header bool) {
	var b strings.Builder
	for i, cell := range cells {
		b.WriteString("| ")
		pad := strings.Repeat(" ", max(0, widths[i]-runewidth.StringWidth(cell)))
		if cols[i].numeric() && !header {
			b.WriteString(pad + cell)
		} else {
			b.WriteString(cell + pad)
		}
		b.WriteString(" ")
	}
	b.WriteString("|\n")
	io.WriteString(w, b.String())
}

// printCSV writes a header row and the rows as RFC 4180 CSV; NULL is an
// empty field.
func printCSV(w io.Writer, src rowSource) (int64, error) {
	cw := csv.NewWriter(w)
	rec := make([]string, len(src.cols))
	for i, c := range src.cols {
		rec[i] = c.name
	}
	if err := cw.Write(rec); err != nil {
		return 0, err
	}
	var n int64
	for {
		vals, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			cw.Flush()
			return n, err
		}
		n++
		for i, v := range vals {
			if v == nil {
				rec[i] = ""
				continue
			}
			rec[i] = textValue(v, src.cols[i])
		}
		if err := cw.Write(rec); err != nil {
			return n, err
		}
	}
	cw.Flush()
	return n, cw.Error()
}

// printJSON writes the rows as one JSON array of objects, one object a
// line.
func printJSON(w io.Writer, src rowSource) (int64, error) {
	keys := make([]string, len(src.cols))
	for i, c := range src.cols {
		keys[i] = jsonString(c.name)
	}
	var n int64
	for {
		vals, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if n > 0 {
				io.WriteString(w, "]\n")
			}
			return n, err
		}
		var b strings.Builder
		if n == 0 {
			b.WriteString("[{")
		} else {
			b.WriteString(",\n{")
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(keys[i] + ":" + jsonValue(v, src.cols[i]))
		}
		b.WriteString("}")
		io.WriteString(w, b.String())
		n++
	}
	if n == 0 {
		io.WriteString(w, "[]\n")
	} else {
		io.WriteString(w, "]\n")
	}
	return n, nil
}

// printLine writes each row as "name = value" lines, names right-aligned,
// rows separated by a blank line.
func printLine(w io.Writer, src rowSource) (int64, error) {
	width := 0
	for _, c := range src.cols {
		width = max(width, runewidth.StringWidth(c.name))
	}
	var n int64
	for {
		vals, err := src.next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		var b strings.Builder
		if n > 0 {
			b.WriteString("\n")
		}
		for i, v := range vals {
			name := src.cols[i].name
			b.WriteString(strings.Repeat(" ", width-runewidth.StringWidth(name)))
			b.WriteString(name + " = " + textValue(v, src.cols[i]) + "\n")
		}
		io.WriteString(w, b.String())
		n++
	}
}

// textValue is how a value reads in a table, CSV or line output.
func textValue(v any, c column) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		bits := 64
		if c.typ == "FLOAT" {
			bits = 32
		}
		return strconv.FormatFloat(v, 'g', -1, bits)
	case bool:
		return strconv.FormatBool(v)
	case []byte:
		return bytesText(v)
	case time.Time:
		return timeText(v, c.typ)
	}
	return nestedJSON(v)
}

// bytesText shows printable UTF-8 bytes as they are and anything else in
// hex, so that a binary value never garbles the terminal.
func bytesText(b []byte) string {
	if utf8.Valid(b) && strings.IndexFunc(string(b), func(r rune) bool { return r < ' ' && r != '\t' }) < 0 {
		return string(b)
	}
	return "0x" + hex.EncodeToString(b)
}

// timeText writes DATE, TIME and TIMESTAMP values as SQL literals read
// them; fractions of a second are printed only when present.
func timeText(t time.Time, typ string) string {
	switch typ {
	case "DATE":
		return t.Format("2006-01-02")
	case "TIME":
		return t.Format("15:04:05.999999999")
	case "TIMESTAMP_LTZ":
		return t.Format("2006-01-02 15:04:05.999999999Z07:00")
	}
	return t.Format("2006-01-02 15:04:05.999999999")
}

// jsonValue writes a value as JSON: numbers (DECIMAL too, exactly) and
// booleans bare, NULL as null, anything else a string.
func jsonValue(v any, c column) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return jsonString(textValue(v, c))
		}
		return textValue(v, c)
	case bool:
		return strconv.FormatBool(v)
	case string:
		if c.typ == "DECIMAL" {
			return v
		}
		return jsonString(v)
	case []byte, time.Time:
		return jsonString(textValue(v, c))
	}
	return nestedJSON(v)
}

// nestedJSON writes ARRAY values as arrays and MAP and ROW values as
// objects (map keys as strings, in sorted order).
func nestedJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = nestedJSON(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = jsonString(k) + ":" + nestedJSON(v[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[textValue(k, column{})] = e
		}
		return nestedJSON(m)
	case int64, bool:
		return jsonValue(v, column{})
	case float64:
		return jsonValue(v, column{typ: "DOUBLE"})
	case string, []byte, time.Time:
		return jsonString(textValue(v, column{}))
	}
	return jsonString(fmt.Sprint(v))
}

// jsonString quotes s as a JSON string, leaving <, > and & as they are
// (the output is read by people and programs, not embedded in HTML).
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return `""`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func runeWidth(r rune) int { return runewidth.RuneWidth(r) }
