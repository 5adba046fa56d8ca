package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildBinary builds the shell once per test run and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if binDir, buildErr = os.MkdirTemp("", "fluss-shell-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "fluss")
		out, err := exec.Command(goTool, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(err.Error() + ": " + string(out))
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// readmeSession is the README's first command: go run ./cmd/fluss -c "...".
const readmeSession = "CREATE TABLE IF NOT EXISTS orders (id BIGINT, amount DECIMAL(10, 2), dt DATE) PARTITIONED BY (dt); " +
	"INSERT INTO orders VALUES (1, 9.50, '2026-01-01'), (2, 120.00, '2026-01-02'); " +
	"SELECT dt, sum(amount) AS total FROM orders GROUP BY dt ORDER BY dt"

// TestBinary runs the built command: the README's one-line session in a
// fresh directory (the default DSN), then a failing script on standard
// input, whose exit status and caret report a caller sees.
func TestBinary(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()

	cmd := exec.Command(bin, "-c", readmeSession)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Equal(t, `+------------+--------+
| dt         | total  |
+------------+--------+
| 2026-01-01 |   9.50 |
| 2026-01-02 | 120.00 |
+------------+--------+
`, string(out))
	_, err = os.Stat(filepath.Join(dir, defaultDSN, "catalog.json"))
	require.NoError(t, err, "the default DSN is ./%s", defaultDSN)

	cmd = exec.Command(bin, "-mode", "csv")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("SELECT count(*) AS n FROM orders;\nSELECT amout FROM orders;\nSELECT 1;\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 1, exit.ExitCode())
	require.Equal(t, "n\n2\n", string(out), "the script stops at the error")
	require.Equal(t, "Error: fluss: column amout does not exist in table fluss.orders at line 1, column 8\n"+
		"SELECT amout FROM orders\n"+
		"       ^\n", stderr.String())
}
