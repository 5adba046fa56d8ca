package predicate

import (
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// MaybeTest reports whether a set of rows described by s may hold a row
// for which p is TRUE. It answers false only when the statistics prove that
// no row matches; a missing statistic, an operator statistics cannot
// decide (LIKE '%s', LIKE '%s%') or a NOT without an exact negation answer
// true. A nil p answers true.
//
// Min and max may be bounds rather than the exact extremes (a lower bound
// for min, an upper bound for max); RowCount and NullCount must be exact.
func MaybeTest(p P, s Stats) bool {
	switch p := p.(type) {
	case nil:
		return true
	case *Leaf:
		return maybeLeaf(p, s)
	case *And:
		for _, c := range p.Children {
			if !MaybeTest(c, s) {
				return false
			}
		}
		return true
	case *Or:
		for _, c := range p.Children {
			if MaybeTest(c, s) {
				return true
			}
		}
		return false
	case *Not:
		// Statistics bound TRUE rows only; "no row is TRUE for the child"
		// says nothing about NOT child, so only a rewrite without the Not
		// can be tested.
		if n, ok := Negate(p.Child); ok {
			return MaybeTest(n, s)
		}
		return true
	}
	return true
}

func maybeLeaf(l *Leaf, s Stats) bool {
	nulls, nullsOK := s.NullCount(l.Column)
	allNull := nullsOK && nulls >= s.RowCount()
	switch l.Op {
	case IsNull:
		return !(nullsOK && nulls == 0)
	case IsNotNull:
		return !allNull
	}
	if allNull {
		// Every other operator is unknown on NULL, never TRUE.
		return false
	}
	minV, minOK := s.Min(l.Column)
	maxV, maxOK := s.Max(l.Column)
	minOK = minOK && minV != nil
	maxOK = maxOK && maxV != nil
	switch l.Op {
	case In:
		for _, lit := range l.Literals {
			if lit == nil {
				continue
			}
			if !minOK || !maxOK || inRange(lit, minV, maxV) {
				return true
			}
		}
		return false
	case NotIn:
		for _, lit := range l.Literals {
			if lit == nil {
				// x NOT IN (..., NULL) is never TRUE.
				return false
			}
		}
		if minOK && maxOK && metadata.Compare(minV, maxV) == 0 {
			for _, lit := range l.Literals {
				if metadata.Compare(minV, lit) == 0 {
					return false
				}
			}
		}
		return true
	}
	if len(l.Literals) != 1 {
		return true
	}
	lit := l.Literals[0]
	if lit == nil {
		// A comparison with NULL is never TRUE.
		return false
	}
	switch l.Op {
	case Eq:
		return !(minOK && metadata.Compare(lit, minV) < 0) && !(maxOK && metadata.Compare(lit, maxV) > 0)
	case NotEq:
		return !(minOK && maxOK && metadata.Compare(minV, lit) == 0 && metadata.Compare(maxV, lit) == 0)
	case Lt:
		return !(minOK && metadata.Compare(minV, lit) >= 0)
	case LtEq:
		return !(minOK && metadata.Compare(minV, lit) > 0)
	case Gt:
		return !(maxOK && metadata.Compare(maxV, lit) <= 0)
	case GtEq:
		return !(maxOK && metadata.Compare(maxV, lit) < 0)
	case StartsWith:
		return maybeStartsWith(lit, minV, minOK, maxV, maxOK)
	}
	return true
}

func inRange(v, lo, hi any) bool {
	return metadata.Compare(v, lo) >= 0 && metadata.Compare(v, hi) <= 0
}

// maybeStartsWith: every string with prefix p sorts at or after p, and
// before any string greater than p that does not itself start with p.
// Strings compare byte-wise, which is what makes this sound.
func maybeStartsWith(lit, minV any, minOK bool, maxV any, maxOK bool) bool {
	p, ok := lit.(string)
	if !ok {
		return true
	}
	if hi, ok := asString(maxV); maxOK && ok && hi < p {
		return false
	}
	if lo, ok := asString(minV); minOK && ok && lo > p && !strings.HasPrefix(lo, p) {
		return false
	}
	return true
}

func asString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

// Negate returns a predicate equal to NOT p under SQL's three-valued logic
// that has no Not node at its top, when one exists: comparisons flip (NOT
// a < 1 is a >= 1, both unknown on NULL), IS NULL and IN swap with their
// negations, AND and OR follow De Morgan (a child without a negation of
// its own keeps a Not), and NOT NOT p is p. The LIKE forms have no such
// negation and report false.
func Negate(p P) (P, bool) {
	switch p := p.(type) {
	case *Leaf:
		op, ok := negatedOp[p.Op]
		if !ok {
			return nil, false
		}
		n := *p
		n.Op = op
		return &n, true
	case *And:
		return negateAll(p.Children, func(cs []P) P { return &Or{Children: cs} })
	case *Or:
		return negateAll(p.Children, func(cs []P) P { return &And{Children: cs} })
	case *Not:
		return p.Child, true
	}
	return nil, false
}

func negateAll(children []P, combine func([]P) P) (P, bool) {
	out := make([]P, len(children))
	for i, c := range children {
		n, ok := Negate(c)
		if !ok {
			// Still exact: only this child keeps its NOT.
			n = &Not{Child: c}
		}
		out[i] = n
	}
	return combine(out), true
}

var negatedOp = map[Op]Op{
	Eq: NotEq, NotEq: Eq,
	Lt: GtEq, GtEq: Lt,
	LtEq: Gt, Gt: LtEq,
	IsNull: IsNotNull, IsNotNull: IsNull,
	In: NotIn, NotIn: In,
}
