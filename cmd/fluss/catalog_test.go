package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShellKeepsFilesOfDirectoryWithoutCatalog: `fluss x -c "SELECT 1"`
// on a directory with x/data/photos/img1.jpg deleted the photo.
func TestShellKeepsFilesOfDirectoryWithoutCatalog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	img := filepath.Join(dir, "data", "photos", "img1.jpg")
	require.NoError(t, os.MkdirAll(filepath.Dir(img), 0o755))
	require.NoError(t, os.WriteFile(img, []byte("precious\n"), 0o644))
	_, errOut, status := runShell(t, "", dir, "-c", "SELECT 1")
	require.NotEqual(t, 0, status)
	require.Contains(t, errOut, "catalog.json is missing")
	b, err := os.ReadFile(img)
	require.NoError(t, err)
	require.Equal(t, "precious\n", string(b))
}
