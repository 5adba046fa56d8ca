package fluss

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/flusslite/fluss"

// allowedImports is DESIGN §1's dependency direction: the packages of this
// module each top-level package may import (its own internal/ packages are
// always allowed). Arrows point down only. The root package is the
// database/sql face: it runs statements through query, holds parsed
// statements (sqlplan), and opens the engine, its lake and the tiering
// service (storage, lake, tiering); it never reaches past query into the
// operators or the planners.
var allowedImports = map[string][]string{
	"":          {"query", "sqlplan", "storage", "lake", "tiering", "metadata"},
	"sqlplan":   {"metadata"},
	"pushdown":  {"sqlplan", "predicate", "metadata"},
	"exec":      {"sqlplan", "metadata"},
	"query":     {"exec", "sqlplan", "lakeunion", "planner", "pushdown", "storage", "lake", "predicate", "metadata"},
	"planner":   {"predicate", "metadata"},
	"lakeunion": {"planner", "storage", "lake", "predicate", "metadata"},
	"tiering":   {"storage", "lake", "metadata"},
	"storage":   {"predicate", "metadata"},
	"lake":      {"predicate", "metadata"},
	"predicate": {"metadata"},
	"metadata":  {},
}

// foreignSeams are third-party packages that exactly one of our packages
// may import: each foreign format has one seam.
var foreignSeams = map[string]string{
	"github.com/xwb1989/sqlparser":                   "sqlplan",
	"github.com/apache/arrow-go/v18/parquet/pqarrow": "lake",
	"github.com/cockroachdb/pebble/v2":               "storage",
}

// TestLayering fails when a package imports against DESIGN §1.
func TestLayering(t *testing.T) {
	imports := moduleImports(t)
	require.NotEmpty(t, imports)
	require.Empty(t, layeringProblems(imports))
}

// TestLayeringCatchesViolations checks the checker itself on violations.
func TestLayeringCatchesViolations(t *testing.T) {
	allowed := allowedImports["storage"]
	require.False(t, contains(allowed, "sqlplan"), "storage must not import sqlplan")
	require.False(t, contains(allowedImports["planner"], "storage"), "planner must not import storage")
	require.Equal(t, "storage", topLevel("storage/internal/logformat"))
	seam, ok := seamOf("github.com/xwb1989/sqlparser/dependency/sqltypes")
	require.True(t, ok)
	require.Equal(t, "sqlplan", seam)

	// The root package reaching past query into the operators, the
	// planners or the split readers is a violation, as is a package the
	// layout does not know.
	problems := layeringProblems(map[string][]string{
		"": {
			modulePath + "/query",
			modulePath + "/exec",
			modulePath + "/planner",
			modulePath + "/pushdown",
			modulePath + "/lakeunion",
			"github.com/xwb1989/sqlparser",
		},
		"util": nil,
	})
	require.Equal(t, []string{
		"fluss (root) imports exec against DESIGN §1",
		"fluss (root) imports github.com/xwb1989/sqlparser, which only sqlplan may import",
		"fluss (root) imports lakeunion against DESIGN §1",
		"fluss (root) imports planner against DESIGN §1",
		"fluss (root) imports pushdown against DESIGN §1",
		"package util is not in DESIGN §1's layout",
	}, problems)
}

// layeringProblems lists, sorted, the imports of imports (package ->
// import paths) that go against allowedImports and foreignSeams.
func layeringProblems(imports map[string][]string) []string {
	var problems []string
	for pkg, deps := range imports {
		top := topLevel(pkg)
		allowed, known := allowedImports[top]
		if strings.HasPrefix(top, "cmd/") {
			allowed, known = []string{"*"}, true // commands may use anything
		}
		if !known {
			problems = append(problems, "package "+displayName(pkg)+" is not in DESIGN §1's layout")
			continue
		}
		for _, dep := range deps {
			if seam, ok := seamOf(dep); ok {
				if top != seam {
					problems = append(problems, displayName(pkg)+" imports "+dep+", which only "+seam+" may import")
				}
				continue
			}
			if !strings.HasPrefix(dep, modulePath) {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(dep, modulePath), "/")
			depTop := topLevel(rel)
			if depTop == top || contains(allowed, "*") || contains(allowed, depTop) {
				continue
			}
			problems = append(problems, displayName(pkg)+" imports "+displayName(rel)+" against DESIGN §1")
		}
	}
	sort.Strings(problems)
	return problems
}

func seamOf(dep string) (string, bool) {
	for prefix, owner := range foreignSeams {
		if dep == prefix || strings.HasPrefix(dep, prefix+"/") {
			return owner, true
		}
	}
	return "", false
}

func topLevel(rel string) string {
	if rel == "" {
		return ""
	}
	if strings.HasPrefix(rel, "cmd/") {
		parts := strings.SplitN(rel, "/", 3)
		return strings.Join(parts[:min(2, len(parts))], "/")
	}
	top, _, _ := strings.Cut(rel, "/")
	return top
}

func displayName(rel string) string {
	if rel == "" {
		return "fluss (root)"
	}
	return rel
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// moduleImports parses the non-test Go files of every package in the
// module (nested modules and testdata are skipped) and returns package ->
// imports.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			// A directory with its own go.mod (bench, slt, difftest,
			// integration) is another module: it may import anything of
			// this one, as any user does.
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != "." && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			out[pkg] = append(out[pkg], p)
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		return nil
	})
	require.NoError(t, err)
	_, err = os.Stat("go.mod")
	require.NoError(t, err, "the layering test runs from the module root")
	return out
}
