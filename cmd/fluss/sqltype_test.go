package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"
)

// TestSQLTypeQuotesRowFields pins that a Parquet struct field whose name
// holds a backquote becomes a ROW field of that very name: its
// backquotes doubled, as in any quoted name, or the CREATE TABLE that
// .import runs does not parse.
func TestSQLTypeQuotesRowFields(t *testing.T) {
	got, err := sqlType(arrow.StructOf(arrow.Field{Name: "a`b", Type: arrow.PrimitiveTypes.Int32}))
	require.NoError(t, err)
	require.Equal(t, "ROW<`a``b` INT>", got)

	var out, errOut bytes.Buffer
	sh := newShell(&out, &errOut, false)
	ctx := context.Background()
	require.NoError(t, sh.open(ctx, filepath.Join(t.TempDir(), "db")))
	defer sh.close()
	require.NoError(t, sh.runSQL(ctx, "CREATE TABLE r (v "+got+")"))
	out.Reset()
	require.NoError(t, sh.runSQL(ctx, "DESCRIBE r"))
	require.Contains(t, out.String(), "ROW<`a``b` INT>")
}
