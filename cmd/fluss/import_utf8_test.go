package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportRefusesInvalidUTF8 pins that .import, which writes through
// AppendArrow's record path, refuses a CSV field that is not UTF-8 (issue
// 15 item 11) with an error naming the row and the column, and leaves
// nothing of that batch in the table.
func TestImportRefusesInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(path, []byte("id,name\n1,ok\n2,caf\xc3\n3,fine\n"), 0o644))
	var out, errOut bytes.Buffer
	sh := newShell(&out, &errOut, false)
	ctx := context.Background()
	require.NoError(t, sh.open(ctx, filepath.Join(dir, "db")))
	defer sh.close()
	err := sh.dot(ctx, ".import "+path+" names")
	require.Error(t, err)
	require.ErrorContains(t, err, "row 2, column name")
	require.ErrorContains(t, err, "not valid UTF-8")
	out.Reset()
	require.NoError(t, sh.runSQL(ctx, "SELECT count(*) AS n FROM names"))
	require.Contains(t, out.String(), "| 0 |")
}
