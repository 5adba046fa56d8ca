// Package predicate is the neutral predicate tree that pushdown hands to the
// planner, storage and the lake: column-versus-literal tests combined with
// AND, OR and NOT. It knows nothing of SQL text.
//
// A predicate is evaluated two ways:
//   - Test: exactly, against one row of canonical values (metadata's value
//     forms). A NULL comparison is false, as in a SQL WHERE.
//   - MaybeTest: conservatively, against statistics (min, max, null count).
//     It answers false only when it can prove no row matches; whenever it
//     cannot, it answers true.
//
// Predicates are immutable values, safe for concurrent use.
package predicate

import "github.com/flusslite/fluss/metadata"

// Op is the operator of a Leaf.
type Op uint8

const (
	Eq         Op = iota + 1 // column = literal
	NotEq                    // column <> literal
	Lt                       // column < literal
	LtEq                     // column <= literal
	Gt                       // column > literal
	GtEq                     // column >= literal
	IsNull                   // column IS NULL
	IsNotNull                // column IS NOT NULL
	In                       // column IN (literals...)
	NotIn                    // column NOT IN (literals...)
	StartsWith               // column LIKE 'p%'
	EndsWith                 // column LIKE '%s'
	Contains                 // column LIKE '%s%'
)

// P is a predicate: *Leaf, *And, *Or or *Not.
type P interface {
	// String renders the predicate as SQL, e.g. "amount >= 200",
	// "name LIKE 'a%'", "dt IN ('2026-01-01', '2026-01-02')".
	String() string
	isPredicate()
}

// Leaf tests one column against literals.
type Leaf struct {
	Op Op
	// Column is the index of the column in the row the predicate is
	// evaluated on (the table's full row unless said otherwise).
	Column int
	// Name is the column's name, for printing.
	Name string
	// Type is the column's type; it prints the literals. A timestamp
	// literal finer than the column's precision widens it to the
	// literal's, so the literal prints whole.
	Type metadata.DataType
	// Literals: one for comparisons and LIKE forms (a string), any number
	// for In/NotIn, none for null tests. A nil literal is SQL NULL.
	//
	// A literal is a canonical value of Type when it converts exactly;
	// otherwise it keeps its own exact value in a form metadata.Compare
	// orders exactly against the column's values: an int64, float64 or
	// DecimalValue for a numeric column (tinyint_col = 300, int_col >
	// 2.5), a finer time.Time for a timestamp. Tests stay exact: a
	// TINYINT column is never equal to 300 and always less than it.
	Literals []any
}

// And is true when every child is.
type And struct{ Children []P }

// Or is true when any child is.
type Or struct{ Children []P }

// Not negates its child.
type Not struct{ Child P }

func (*Leaf) isPredicate() {}
func (*And) isPredicate()  {}
func (*Or) isPredicate()   {}
func (*Not) isPredicate()  {}

// Row is a row of canonical values read by Test.
type Row interface {
	Value(column int) any
}

// Stats are the statistics MaybeTest reads. A column without statistics
// reports ok=false and the test answers "maybe".
type Stats interface {
	RowCount() int64
	Min(column int) (v any, ok bool)
	Max(column int) (v any, ok bool)
	NullCount(column int) (n int64, ok bool)
}

// AndOf combines predicates with AND, dropping nils; it returns nil when
// none are left and the single predicate when only one is.
func AndOf(ps ...P) P {
	var out []P
	for _, p := range ps {
		if p == nil {
			continue
		}
		if a, ok := p.(*And); ok {
			out = append(out, a.Children...)
			continue
		}
		out = append(out, p)
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return &And{Children: out}
}

// Conjuncts splits p at its top-level ANDs.
func Conjuncts(p P) []P {
	if p == nil {
		return nil
	}
	if a, ok := p.(*And); ok {
		var out []P
		for _, c := range a.Children {
			out = append(out, Conjuncts(c)...)
		}
		return out
	}
	return []P{p}
}
