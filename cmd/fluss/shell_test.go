package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// runShell runs the shell's main in-process on stdin with args and
// returns what it wrote and its exit status.
func runShell(t *testing.T, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = run(context.Background(), args, environment{
		stdin:  strings.NewReader(stdin),
		stdout: &out,
		stderr: &errOut,
	})
	return out.String(), errOut.String(), status
}

// durations are the elapsed times .timer prints; they differ run to run.
var durations = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s|m\d+(\.\d+)?s)\b`)

// TestShell runs the scripts of testdata/shell through the shell, as
// standard input or -c, against one database per file (so a file is one
// long session across its cases). Its commands:
//
//	run [c] [mode=M] [db=NAME] [args=A,B]: run the input as standard input
//	    (or with -c); prints stdout, then stderr and the exit status when
//	    they are not empty and 0. $TMP in the input is the test's directory.
//	file name=F: write the input to $TMP/F ($TMP expanded there too).
//	lakefile as=F: copy the (only) lake Parquet file of the database to $TMP/F.
func TestShell(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		dir := t.TempDir()
		expand := func(s string) string { return strings.ReplaceAll(s, "$TMP", dir) }
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "file":
				var name string
				d.ScanArgs(t, "name", &name)
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(expand(d.Input)+"\n"), 0o644))
				return ""
			case "lakefile":
				var name string
				d.ScanArgs(t, "as", &name)
				files, err := filepath.Glob(filepath.Join(dir, "db", "lake", "*", "data", "*", "*", "*.parquet"))
				require.NoError(t, err)
				require.Len(t, files, 1)
				data, err := os.ReadFile(files[0])
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
				return ""
			case "run":
				db := "db"
				d.MaybeScanArgs(t, "db", &db)
				args := []string{filepath.Join(dir, db)}
				if d.HasArg("mode") {
					var mode string
					d.ScanArgs(t, "mode", &mode)
					args = append(args, "-mode", mode)
				}
				stdin := expand(d.Input)
				if d.HasArg("c") {
					args = append(args, "-c", stdin)
					stdin = ""
				}
				stdout, stderr, status := runShell(t, stdin, args...)
				var b strings.Builder
				b.WriteString(stdout)
				if stderr != "" {
					b.WriteString("stderr:\n" + stderr)
				}
				if status != 0 {
					fmt.Fprintf(&b, "exit %d\n", status)
				}
				out := strings.ReplaceAll(b.String(), dir, "$TMP")
				return durations.ReplaceAllString(out, "<dur>")
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

// TestRunFlags covers the command line: flags before and after the DSN,
// usage errors (status 2), a DSN that cannot be opened and scripts that
// fail part-way (status 1, and nothing after the error runs).
func TestRunFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	for _, tc := range []struct {
		name       string
		args       []string
		stdin      string
		wantOut    string
		wantErr    string // a part of stderr; "" requires it empty
		wantStatus int
	}{
		{name: "c flag", args: []string{"-c", "SELECT 1 AS a", db}, wantOut: "+---+\n| a |\n+---+\n| 1 |\n+---+\n"},
		{name: "flag after the DSN", args: []string{db, "-mode", "csv", "-c", "SELECT 1 AS a"}, wantOut: "a\n1\n"},
		{name: "stdin script", args: []string{db, "-mode=json"}, stdin: "SELECT 1 AS a;\nSELECT 'x' AS b;\n", wantOut: "[{\"a\":1}]\n[{\"b\":\"x\"}]\n"},
		{name: "last statement without semicolon", args: []string{db, "-mode=csv"}, stdin: "SELECT 1 AS a;\nSELECT 2 AS b", wantOut: "a\n1\nb\n2\n"},
		{name: "stops at the first error", args: []string{db, "-mode=csv"}, stdin: "SELECT 1 AS a;\nSELECT nope;\nSELECT 2 AS b;\n",
			wantOut: "a\n1\n", wantErr: "Error: fluss:", wantStatus: 1},
		{name: "error in -c", args: []string{"-c", "DROP TABLE missing", db}, wantErr: "Error: fluss:", wantStatus: 1},
		{name: "quit ends the script", args: []string{db, "-mode=csv"}, stdin: "SELECT 1 AS a;\n.quit\nSELECT nope;\n", wantOut: "a\n1\n"},
		{name: "unknown flag", args: []string{"-x", db}, wantErr: "flag provided but not defined: -x", wantStatus: 2},
		{name: "two DSNs", args: []string{db, db}, wantErr: "usage: fluss", wantStatus: 2},
		{name: "unknown mode", args: []string{"-mode", "xml", db}, wantErr: `unknown mode "xml"`, wantStatus: 2},
		{name: "help", args: []string{"-h"}, wantErr: "usage: fluss"},
		{name: "bad DSN", args: []string{db + "?nosuchoption=1", "-c", "SELECT 1"}, wantErr: "Error: opening " + db + "?nosuchoption=1: fluss:", wantStatus: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, status := runShell(t, tc.stdin, tc.args...)
			require.Equal(t, tc.wantStatus, status, "stderr: %s", errOut)
			if tc.wantOut != "" || tc.wantStatus == 0 {
				require.Equal(t, tc.wantOut, out)
			}
			if tc.wantErr == "" {
				require.Empty(t, errOut)
			} else {
				require.Contains(t, errOut, tc.wantErr)
			}
		})
	}
}

// TestDefaultDSN: without a DSN the shell opens ./fluss-data.
func TestDefaultDSN(t *testing.T) {
	t.Chdir(t.TempDir())
	_, errOut, status := runShell(t, "", "-c", "CREATE TABLE t (a INT)")
	require.Equal(t, 0, status, errOut)
	_, err := os.Stat(filepath.Join(defaultDSN, "catalog.json"))
	require.NoError(t, err)
}
