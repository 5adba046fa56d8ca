package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestValueText(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 600e6, time.UTC)
	for _, tc := range []struct {
		v          any
		typ        string
		text, json string
	}{
		{nil, "INT", "NULL", "null"},
		{int64(-3), "BIGINT", "-3", "-3"},
		{0.1, "DOUBLE", "0.1", "0.1"},
		{float64(float32(0.1)), "FLOAT", "0.1", "0.1"},
		{math.Inf(1), "DOUBLE", "+Inf", `"+Inf"`},
		{"12.50", "DECIMAL", "12.50", "12.50"},
		{`a"<b>`, "STRING", `a"<b>`, `"a\"<b>"`},
		{true, "BOOLEAN", "true", "true"},
		{[]byte("hi"), "BYTES", "hi", `"hi"`},
		{[]byte{0, 0xff}, "BINARY", "0x00ff", `"0x00ff"`},
		{ts, "TIMESTAMP", "2026-01-02 03:04:05.6", `"2026-01-02 03:04:05.6"`},
		{ts.In(time.FixedZone("", 3600)), "TIMESTAMP_LTZ", "2026-01-02 04:04:05.6+01:00", `"2026-01-02 04:04:05.6+01:00"`},
		{ts, "DATE", "2026-01-02", `"2026-01-02"`},
		{time.Date(1970, 1, 1, 13, 0, 0, 0, time.UTC), "TIME", "13:00:00", `"13:00:00"`},
		{[]any{int64(1), nil, "x"}, "ARRAY<INT>", `[1,null,"x"]`, `[1,null,"x"]`},
		{map[any]any{"b": int64(2), "a": 1.5}, "MAP<STRING, DOUBLE>", `{"a":1.5,"b":2}`, `{"a":1.5,"b":2}`},
		{map[string]any{"x": []any{true}}, "ROW<x ARRAY<BOOLEAN>>", `{"x":[true]}`, `{"x":[true]}`},
	} {
		c := column{name: "c", typ: tc.typ}
		require.Equal(t, tc.text, textValue(tc.v, c), "%v as %s", tc.v, tc.typ)
		require.Equal(t, tc.json, jsonValue(tc.v, c), "%v as %s", tc.v, tc.typ)
	}
}

// TestPrintTableStreamsPastSample: rows after the sample that sets the
// column widths are still printed, and a read error after some rows
// closes the table and is returned.
func TestPrintTableStreamsPastSample(t *testing.T) {
	rows := make([][]any, tableSample+2)
	for i := range rows {
		rows[i] = []any{int64(i)}
	}
	rows[len(rows)-1] = []any{int64(123456789)}
	var b bytes.Buffer
	n, err := printRows(&b, modeTable, staticSource([]column{{name: "n", typ: "BIGINT"}}, rows))
	require.NoError(t, err)
	require.EqualValues(t, len(rows), n)
	// The widths come from the first tableSample rows (up to 999).
	out := b.String()
	require.True(t, strings.HasSuffix(out, "| 999 |\n| 1000 |\n| 123456789 |\n+-----+\n"), "%q", out[len(out)-60:])
}
