package predicate

import (
	"bytes"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// truth is a SQL three-valued truth value. Test works in three values
// internally because NOT of unknown is unknown: collapsing unknown to false
// below a NOT would turn "NOT (x = 1)" true for a NULL x.
type truth uint8

const (
	tFalse truth = iota
	tUnknown
	tTrue
)

func (t truth) not() truth { return tTrue - t }

func truthOf(b bool) truth {
	if b {
		return tTrue
	}
	return tFalse
}

// Test evaluates p exactly against row and reports whether it is TRUE, as a
// SQL WHERE does: a comparison with NULL is unknown, and unknown is not a
// match. A nil p matches every row.
func Test(p P, row Row) bool {
	if p == nil {
		return true
	}
	return eval(p, row) == tTrue
}

func eval(p P, row Row) truth {
	switch p := p.(type) {
	case *Leaf:
		return evalLeaf(p, row.Value(p.Column))
	case *And:
		out := tTrue
		for _, c := range p.Children {
			out = min(out, eval(c, row))
			if out == tFalse {
				break
			}
		}
		return out
	case *Or:
		out := tFalse
		for _, c := range p.Children {
			out = max(out, eval(c, row))
			if out == tTrue {
				break
			}
		}
		return out
	case *Not:
		return eval(p.Child, row).not()
	}
	return tUnknown
}

func evalLeaf(l *Leaf, v any) truth {
	switch l.Op {
	case IsNull:
		return truthOf(v == nil)
	case IsNotNull:
		return truthOf(v != nil)
	case In, NotIn:
		t := evalIn(l.Literals, v)
		if l.Op == NotIn {
			return t.not()
		}
		return t
	}
	if v == nil || len(l.Literals) != 1 || l.Literals[0] == nil {
		return tUnknown
	}
	lit := l.Literals[0]
	switch l.Op {
	case StartsWith, EndsWith, Contains:
		return evalLike(l.Op, v, lit)
	}
	c := metadata.Compare(v, lit)
	switch l.Op {
	case Eq:
		return truthOf(c == 0)
	case NotEq:
		return truthOf(c != 0)
	case Lt:
		return truthOf(c < 0)
	case LtEq:
		return truthOf(c <= 0)
	case Gt:
		return truthOf(c > 0)
	case GtEq:
		return truthOf(c >= 0)
	}
	return tUnknown
}

// evalIn is SQL's v IN (lits): true on a match, else unknown when v or any
// literal is NULL, else false.
func evalIn(lits []any, v any) truth {
	if v == nil {
		return tUnknown
	}
	out := tFalse
	for _, lit := range lits {
		if lit == nil {
			out = tUnknown
			continue
		}
		if metadata.Compare(v, lit) == 0 {
			return tTrue
		}
	}
	return out
}

func evalLike(op Op, v, lit any) truth {
	pat, ok := lit.(string)
	if !ok {
		return tUnknown
	}
	switch s := v.(type) {
	case string:
		switch op {
		case StartsWith:
			return truthOf(strings.HasPrefix(s, pat))
		case EndsWith:
			return truthOf(strings.HasSuffix(s, pat))
		default:
			return truthOf(strings.Contains(s, pat))
		}
	case []byte:
		switch op {
		case StartsWith:
			return truthOf(bytes.HasPrefix(s, []byte(pat)))
		case EndsWith:
			return truthOf(bytes.HasSuffix(s, []byte(pat)))
		default:
			return truthOf(bytes.Contains(s, []byte(pat)))
		}
	}
	return tUnknown
}
