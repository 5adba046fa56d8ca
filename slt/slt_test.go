package slt

import (
	"database/sql"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	corpusDir = flag.String("slt.dir", "", "directory of the sqllogictest corpus (default $FLUSS_SLT_DIR, else ../../shared/sqllogictest)")
	full      = flag.Bool("slt.full", false, "run every file of the corpus, not only the CI sample")
	timeout   = flag.Duration("slt.timeout", 10*time.Second, "longest a statement may take before it counts as a hang")
	verbose   = flag.Bool("slt.failures", false, "print every failing record")
)

// known are wrong results that are real engine bugs already reported,
// keyed by file (relative to the corpus) and line; they are printed but do
// not fail the test. A wrong result not listed here fails it.
var known = map[string]string{}

func dir(t *testing.T) string {
	d := *corpusDir
	if d == "" {
		d = os.Getenv("FLUSS_SLT_DIR")
	}
	if d == "" {
		d = filepath.Join("..", "..", "shared", "sqllogictest")
	}
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		t.Skipf("no sqllogictest corpus at %s (it is not part of the repository; point -slt.dir or FLUSS_SLT_DIR at one)", d)
	}
	return d
}

func files(t *testing.T, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".test") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(out)
	require.NotEmpty(t, out, "no .test files under %s", root)
	return out
}

func TestCorpus(t *testing.T) {
	root := dir(t)
	names := files(t, root)
	var (
		mu      sync.Mutex
		results = map[string]*Result{}
	)
	t.Run("file", func(t *testing.T) {
		for _, name := range names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				res := runFile(t, filepath.Join(root, filepath.FromSlash(name)))
				mu.Lock()
				results[name] = res
				mu.Unlock()
				for _, f := range res.Failures {
					key := fmt.Sprintf("%s:%d", name, f.Record.Line)
					switch {
					case f.Class == Hang || f.Class == Panic:
						t.Errorf("%s: %s: %s\n%s", key, f.Class, f.Detail, f.Record.SQL)
					case f.Class == Wrong && known[key] == "":
						t.Errorf("%s: wrong result: %s\n%s", key, f.Detail, f.Record.SQL)
					case *verbose:
						t.Logf("%s: %s: %s\n%s", key, f.Class, f.Detail, f.Record.SQL)
					}
				}
			})
		}
	})
	summary(t, names, results)
}

func runFile(t *testing.T, path string) *Result {
	in, err := os.Open(path)
	require.NoError(t, err)
	defer in.Close()
	recs, err := Parse(in)
	require.NoError(t, err, path)
	db, err := sql.Open("fluss", ":memory:")
	require.NoError(t, err)
	r := &Runner{Timeout: *timeout}
	res := r.Run(db, recs)
	// A hung statement may still hold the database; closing it would
	// wait for that statement, so it is left to the process's end.
	if !res.Halted {
		require.NoError(t, db.Close())
	}
	return res
}

// passBar is the share of the corpus's records that must pass: those
// that fail are on forms the engine refuses, each listed by its cause.
const passBar = 97.0

func summary(t *testing.T, names []string, results map[string]*Result) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "file\trecords\tpassed\t%")
	for c := range numClasses {
		fmt.Fprintf(w, "\t%s", c)
	}
	fmt.Fprintln(w, "\t")
	total := &Result{}
	causes := map[string]int{}
	for _, name := range names {
		res := results[name]
		if res == nil {
			continue
		}
		row(w, name, res)
		total.Records += res.Records
		total.Passed += res.Passed
		total.Failures = append(total.Failures, res.Failures...)
		for _, f := range res.Failures {
			cause := f.Class.String()
			if f.Cause != "" {
				cause += ": " + f.Cause
			}
			causes[cause]++
		}
	}
	row(w, "total", total)
	require.NoError(t, w.Flush())
	ranAll := len(results) == len(names)
	if total.Records > 0 {
		fmt.Fprintf(&b, "\npassed %d of %d records (%.2f%%); the bar is %.0f%%\n",
			total.Passed, total.Records, 100*float64(total.Passed)/float64(total.Records), passBar)
	}
	// The bar holds for the corpus as a whole; a run of some files only
	// (-run) reports without it.
	if ranAll && total.Records > 0 && 100*float64(total.Passed)/float64(total.Records) < passBar {
		t.Errorf("%d of %d records pass, below the bar of %.0f%%", total.Passed, total.Records, passBar)
	}
	type kv struct {
		cause string
		n     int
	}
	var top []kv
	for c, n := range causes {
		top = append(top, kv{c, n})
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].n != top[j].n {
			return top[i].n > top[j].n
		}
		return top[i].cause < top[j].cause
	})
	fmt.Fprintln(&b, "\ntop causes:")
	for i, c := range top {
		if i == 20 {
			break
		}
		fmt.Fprintf(&b, "%8d  %s\n", c.n, c.cause)
	}
	t.Log("\n" + b.String())
}

func row(w *tabwriter.Writer, name string, res *Result) {
	pct := 0.0
	if res.Records > 0 {
		pct = 100 * float64(res.Passed) / float64(res.Records)
	}
	fmt.Fprintf(w, "%s\t%d\t%d\t%.1f", name, res.Records, res.Passed, pct)
	for c := range numClasses {
		fmt.Fprintf(w, "\t%d", res.Count(c))
	}
	fmt.Fprintln(w, "\t")
}
