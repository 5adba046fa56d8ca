package query

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

type catalog map[string]metadata.TableInfo

func (c catalog) TableInfo(_ context.Context, p metadata.TablePath) (metadata.TableInfo, error) {
	if t, ok := c[p.Table]; ok {
		return t, nil
	}
	return metadata.TableInfo{}, fmt.Errorf("table %s: %w", p, metadata.ErrNotFound)
}

func testCatalog() catalog {
	table := func(name string, pk []string, cols ...string) metadata.TableInfo {
		t := metadata.TableInfo{Path: metadata.TablePath{Database: "fluss", Table: name}}
		for _, c := range cols {
			t.Schema.Columns = append(t.Schema.Columns, metadata.Column{Name: c, Type: metadata.IntType(), NotNull: contains(pk, c)})
		}
		t.Schema.PrimaryKey = pk
		return t
	}
	return catalog{
		"fact":  table("fact", nil, "id", "d1", "d2", "v"),
		"dim":   table("dim", []string{"id"}, "id", "name"),
		"dim2":  table("dim2", []string{"a", "b"}, "a", "b", "w"),
		"small": table("small", nil, "k", "x"),
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestStrategyGolden prints how each join of a query runs for the given
// estimated rows of its tables: which side is held, and when the held
// side is a key table looked up instead of read.
func TestStrategyGolden(t *testing.T) {
	cat := testCatalog()
	datadriven.RunTest(t, "testdata/strategy", func(t *testing.T, d *datadriven.TestData) string {
		rows := map[string]int64{}
		for _, arg := range d.CmdArgs {
			n, err := strconv.ParseInt(arg.Vals[0], 10, 64)
			require.NoError(t, err)
			rows[arg.Key] = n
		}
		st, err := sqlplan.Parse(d.Input)
		require.NoError(t, err)
		sp, err := sqlplan.BindSelect(context.Background(), st.(*sqlplan.Select), cat, "", nil)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		a := &Analysis{strategy: map[*sqlplan.JoinRel]string{}}
		var estimate func(sqlplan.Relation) int64
		estimate = func(rel sqlplan.Relation) int64 {
			switch r := rel.(type) {
			case *sqlplan.ScanRel:
				if n, ok := rows[r.Plan.Table.Path.Table]; ok {
					return n
				}
				return -1
			case *sqlplan.JoinRel:
				l, rr := estimate(r.L), estimate(r.R)
				a.decided(r, chooseStrategy(r, l, rr), l, rr)
				return joinEstimate(l, rr)
			}
			return -1
		}
		estimate(sp.Source)
		leaf := func(p *sqlplan.SelectPlan) []string { return []string{"Scan: " + p.Table.Path.Table} }
		return strings.Join(sqlplan.FormatTreeNotes(sp, leaf, a.Note), "\n") + "\n"
	})
}
