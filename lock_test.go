package fluss_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

const lockChildEnv = "FLUSS_TEST_LOCK_CHILD_DIR"

// TestSecondProcessGetsLocked opens a directory here, then runs this test
// binary again as a second process that tries to open the same directory.
func TestSecondProcessGetsLocked(t *testing.T) {
	if dir := os.Getenv(lockChildEnv); dir != "" {
		lockChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "db")
	db, err := sql.Open("fluss", dir)
	require.NoError(t, err)
	mustExec(t, db, `CREATE TABLE t (x INT)`)

	run := func() string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSecondProcessGetsLocked$", "-test.count=1")
		cmd.Env = append(os.Environ(), lockChildEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	out := run()
	require.Contains(t, out, "child: locked")
	require.Contains(t, out, "database is locked")
	require.Contains(t, out, dir)

	// Once this process closes the directory, the other one may open it.
	require.NoError(t, db.Close())
	require.Contains(t, run(), "child: opened")
}

func lockChild(dir string) {
	db, err := sql.Open("fluss", dir)
	if err == nil {
		err = db.Ping()
		defer db.Close()
	}
	switch {
	case errors.Is(err, fluss.ErrLocked):
		fmt.Println("child: locked:", strings.TrimSpace(err.Error()))
	case err != nil:
		fmt.Println("child: other error:", err)
	default:
		fmt.Println("child: opened")
	}
}
