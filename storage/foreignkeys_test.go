package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// A foreign key is recorded in the catalog, which then says version 4 so
// that a release without foreign keys refuses it instead of rewriting it
// without them; reopened, the key is there. Dropping the last key brings
// the catalog back to the version every release reads.
func TestCatalogKeepsForeignKeys(t *testing.T) {
	dir := t.TempDir()
	version := func() string {
		data, err := os.ReadFile(filepath.Join(dir, catalogFile))
		require.NoError(t, err)
		for line := range strings.SplitSeq(string(data), "\n") {
			if strings.Contains(line, `"version"`) {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	fk := metadata.ForeignKey{Name: "fk_parent", Columns: []string{"id"}, RefTable: path("parent"), RefColumns: []string{"id"}, OnDelete: "CASCADE"}
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		createPK(t, e, "parent", nil)
		createPK(t, e, "child", nil)
		require.Equal(t, `"version": 1,`, version())
		_, err := e.AddForeignKey(ctx, path("child"), metadata.ForeignKey{Name: "x", Columns: []string{"id"}, RefTable: path("ghost"), RefColumns: []string{"id"}}, true)
		require.ErrorIs(t, err, metadata.ErrNotFound, "with the checks, the parent must exist")
		require.Equal(t, `"version": 1,`, version(), "a refused key changes nothing")
		_, err = e.AddForeignKey(ctx, path("child"), fk, true)
		require.NoError(t, err)
	}()
	require.Equal(t, `"version": 4,`, version())
	e, _ := testEngine(t, dir, nil)
	defer e.Close()
	info, err := e.TableInfo(ctx, path("child"))
	require.NoError(t, err)
	require.Equal(t, []metadata.ForeignKey{fk}, info.ForeignKeys)
	_, err = e.DropForeignKey(ctx, path("child"), "nope")
	require.ErrorIs(t, err, metadata.ErrNotFound)
	_, err = e.DropForeignKey(ctx, path("child"), "FK_PARENT")
	require.NoError(t, err)
	require.Equal(t, `"version": 1,`, version())
	info, err = e.TableInfo(ctx, path("child"))
	require.NoError(t, err)
	require.Empty(t, info.ForeignKeys)
}
