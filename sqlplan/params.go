package sqlplan

import (
	"strconv"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Arg is one bound argument of a statement, converted by the driver from
// driver.NamedValue: Ordinal is 1-based, Name is set for sql.Named
// arguments. Value is a Go value (int64, float64, bool, string, []byte,
// time.Time, metadata canonical values, slices and maps for nested types).
type Arg struct {
	Ordinal int
	Name    string
	Value   any
}

// paramStyle tracks which placeholder style a statement uses. One
// statement uses one style: ? and $N are both positional but number
// differently, and :name is matched by name, so mixing them would make
// argument positions ambiguous.
type paramStyle struct {
	style     byte // 0 none yet, '?', '$' or ':'
	questions int  // ? seen so far
}

// param turns a placeholder token into a Param, refusing a second style.
func (ps *paramStyle) param(src string, t token) (*Param, error) {
	style := t.text[0]
	if ps.style != 0 && ps.style != style {
		return nil, &SyntaxError{Pos: t.pos, Near: src[t.pos:t.end],
			Msg: "placeholders " + styleName(ps.style) + " and " + styleName(style) + " cannot be mixed in one statement"}
	}
	ps.style = style
	switch style {
	case '?':
		ps.questions++
		return &Param{Ordinal: ps.questions}, nil
	case '$':
		n, err := strconv.Atoi(t.text[1:])
		if err != nil || n < 1 || n > 65535 {
			return nil, &SyntaxError{Pos: t.pos, Near: src[t.pos:t.end], Msg: "placeholder number out of range [1, 65535]"}
		}
		return &Param{Ordinal: n}, nil
	}
	return &Param{Name: t.text[1:]}, nil
}

func styleName(s byte) string {
	switch s {
	case '?':
		return "?"
	case '$':
		return "$N"
	}
	return ":name"
}

// countInputs is NumInput over expressions: the highest ordinal of
// positional placeholders, or the number of distinct names.
func countInputs(es ...Expr) int {
	maxOrd := 0
	names := map[string]bool{}
	for _, e := range es {
		walkParams(e, func(p *Param) {
			if p.Name != "" {
				names[p.Name] = true
			} else if p.Ordinal > maxOrd {
				maxOrd = p.Ordinal
			}
		})
	}
	return maxOrd + len(names)
}

// walkParams calls fn for every placeholder of a parsed expression,
// those of its subqueries included.
func walkParams(e Expr, fn func(*Param)) {
	Walk(e, func(x Expr) bool {
		switch p := x.(type) {
		case *Param:
			fn(p)
		case *Subquery:
			if p.Select != nil {
				for _, y := range p.Select.exprs() {
					walkParams(y, fn)
				}
			}
		}
		return true
	})
}

// lookupArg finds the argument of a placeholder: by name for :name (exact
// first, then ignoring case), by ordinal otherwise.
func lookupArg(p *Param, args []Arg) (any, error) {
	if p.Name != "" {
		for _, a := range args {
			if a.Name == p.Name {
				return a.Value, nil
			}
		}
		for _, a := range args {
			if strings.EqualFold(a.Name, p.Name) {
				return a.Value, nil
			}
		}
		return nil, errorf(metadata.ErrInvalidValue, "no argument for placeholder %s", p)
	}
	// database/sql passes arguments in ordinal order: look there first, so
	// binding a statement with many placeholders stays linear.
	if i := p.Ordinal - 1; i >= 0 && i < len(args) && args[i].Ordinal == p.Ordinal && args[i].Name == "" {
		return args[i].Value, nil
	}
	for _, a := range args {
		if a.Ordinal == p.Ordinal && a.Name == "" {
			return a.Value, nil
		}
	}
	for _, a := range args {
		if a.Ordinal == p.Ordinal {
			return a.Value, nil
		}
	}
	return nil, errorf(metadata.ErrInvalidValue, "no argument for placeholder %s (%d given)", p, len(args))
}

// Walk calls fn for e and, while fn returns true, for every expression
// below it, depth first. A nil e is skipped.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch x := e.(type) {
	case *Compare:
		Walk(x.L, fn)
		Walk(x.R, fn)
	case *And:
		Walk(x.L, fn)
		Walk(x.R, fn)
	case *Or:
		Walk(x.L, fn)
		Walk(x.R, fn)
	case *Not:
		Walk(x.E, fn)
	case *IsNull:
		Walk(x.E, fn)
	case *In:
		Walk(x.E, fn)
		for _, y := range x.List {
			Walk(y, fn)
		}
	case *Between:
		Walk(x.E, fn)
		Walk(x.Lo, fn)
		Walk(x.Hi, fn)
	case *Like:
		Walk(x.E, fn)
		Walk(x.Pattern, fn)
	case *Arith:
		Walk(x.L, fn)
		Walk(x.R, fn)
	case *Neg:
		Walk(x.E, fn)
	case *Func:
		for _, y := range x.Args {
			Walk(y, fn)
		}
	case *Case:
		Walk(x.Operand, fn)
		for _, w := range x.Whens {
			Walk(w.Cond, fn)
			Walk(w.Result, fn)
		}
		Walk(x.Else, fn)
	case *Cast:
		Walk(x.E, fn)
	case *Subquery:
		// The inner query is a scope of its own: only what the enclosing
		// query evaluates is below the node.
		Walk(x.E, fn)
		for _, y := range x.Keys {
			Walk(y, fn)
		}
		for _, y := range x.Outer {
			Walk(y, fn)
		}
	}
}
