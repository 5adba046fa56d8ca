package sqlplan

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// A subquery is a SELECT inside an expression. It binds with the binder
// of today's single-table SELECT, with one addition: a column its own FROM
// does not have resolves in the enclosing query (innermost scope first,
// as MySQL does) and becomes a correlation. Each correlation is one entry
// of Subquery.Outer, an expression of the enclosing query; inside the
// inner plan it reads as OuterRef{Slot}. A query nested two levels deep
// that names a column of the outermost query correlates the middle one
// too: the middle query's Outer carries the column, and the innermost
// query's Outer carries the middle query's OuterRef to it. So an OuterRef
// always refers to the Subquery directly around it.
//
// A correlated subquery is run once per distinct tuple of its Outer
// values: BindValues binds it again with those values as literals, so the
// inner query plans as if they had been written there (pushdown, point
// lookups and partition pruning apply).

// SubqueryKind is the form a subquery takes in its expression.
type SubqueryKind uint8

const (
	// SubScalar is (SELECT ...) as a value: NULL without a row, an error
	// with more than one.
	SubScalar SubqueryKind = iota + 1
	// SubExists is [NOT] EXISTS (SELECT ...).
	SubExists
	// SubIn is E [NOT] IN (SELECT ...): E = ANY (...), negated.
	SubIn
	// SubAny is E op ANY|SOME (SELECT ...).
	SubAny
	// SubAll is E op ALL (SELECT ...).
	SubAll
	// SubSemi is what decorrelate makes of a correlated EXISTS or IN in
	// a WHERE: TRUE when the tuple Keys equals a row of the inner query
	// (its outputs, one per key) and neither has a NULL, else FALSE
	// (Not: the other way round). It is never NULL.
	SubSemi
)

// Subquery is a SELECT used as an expression. Before binding only Kind,
// Not, Op, E and Select are set; binding fills in Plan, Outer and T.
type Subquery struct {
	Kind SubqueryKind
	// Not negates EXISTS and IN.
	Not bool
	// Op is the comparison of ANY and ALL; OpEq for IN.
	Op CmpOp
	// E is the left operand of IN, ANY and ALL; nil otherwise.
	E Expr
	// Keys are the outer tuple of SubSemi.
	Keys []Expr
	// Select is the inner query as parsed.
	Select *Select
	// Plan is the inner query bound; OuterRefs stand for the correlation.
	Plan *SelectPlan
	// Outer are the expressions of the enclosing query the inner one
	// reads: OuterRef{Slot: i} inside Plan is Outer[i].
	Outer []Expr
	// T is the type of a scalar subquery (BOOLEAN for the other kinds).
	T metadata.DataType
	// Text is the inner query as written (names qualified as written),
	// which String prints: two subqueries print alike only when they are
	// the same query.
	Text string

	// What BindValues needs to bind the inner query again: the names the
	// correlations were written as (one per Outer entry), and the
	// statement's arguments and current database.
	keys      []string
	args      []Arg
	currentDB string
}

// OuterRef is a column of an enclosing query read by a subquery: entry
// Slot of the Outer list of the Subquery directly around it. It appears
// only in Subquery.Plan; a plan bound with BindValues holds literals in
// its place.
type OuterRef struct {
	Slot int
	Name string
	T    metadata.DataType
}

func (e *Subquery) Type() metadata.DataType {
	if e.Kind == SubScalar {
		return e.T
	}
	return boolType
}
func (e *OuterRef) Type() metadata.DataType { return e.T }
func (*Subquery) isExpr()                   {}
func (*OuterRef) isExpr()                   {}

func (e *OuterRef) String() string {
	return (&ColumnRef{Name: e.Name}).String()
}

func (e *Subquery) String() string {
	var b strings.Builder
	if e.E != nil {
		writeOperand(&b, e.E)
		b.WriteString(" ")
	}
	switch e.Kind {
	case SubSemi:
		b.WriteString("(")
		writeList(&b, e.Keys)
		b.WriteString(") ")
		if e.Not {
			b.WriteString("NOT ")
		}
		b.WriteString("IN ")
	case SubExists:
		if e.Not {
			b.WriteString("NOT ")
		}
		b.WriteString("EXISTS ")
	case SubIn:
		if e.Not {
			b.WriteString("NOT ")
		}
		b.WriteString("IN ")
	case SubAny:
		b.WriteString(e.Op.String() + " ANY ")
	case SubAll:
		b.WriteString(e.Op.String() + " ALL ")
	}
	b.WriteString("(" + e.Text + ")")
	return b.String()
}

// Width is how many of the inner query's output columns the enclosing
// query reads: one per key of SubSemi, else the first.
func (e *Subquery) Width() int {
	if e.Kind == SubSemi {
		return len(e.Keys)
	}
	return 1
}

// Correlated reports whether the subquery reads its enclosing query.
func (e *Subquery) Correlated() bool { return len(e.Outer) > 0 }

// MapOperands returns a copy of e whose operands, the ones the enclosing
// query evaluates (the left operand, the keys and the correlation), are
// f of e's (rewritten by the caller onto the output of an aggregation,
// say). The inner query is shared.
func (e *Subquery) MapOperands(f func(Expr) Expr) *Subquery {
	c := *e
	if e.E != nil {
		c.E = f(e.E)
	}
	list := func(in []Expr) []Expr {
		if in == nil {
			return nil
		}
		out := make([]Expr, len(in))
		for i, x := range in {
			out[i] = f(x)
		}
		return out
	}
	c.Keys, c.Outer = list(e.Keys), list(e.Outer)
	return &c
}

// BindValues binds the inner query with values for its correlation, in
// the order of Outer, as literals of their types. An uncorrelated
// subquery returns Plan.
func (e *Subquery) BindValues(ctx context.Context, cat Catalog, values []any) (*SelectPlan, error) {
	if !e.Correlated() {
		return e.Plan, nil
	}
	if len(values) != len(e.Outer) || e.Select == nil {
		return nil, errorf(metadata.ErrInvalidValue, "subquery %s takes %d outer values, not %d", e, len(e.Outer), len(values))
	}
	lits := make([]*Literal, len(values))
	for i, v := range values {
		lits[i] = &Literal{Value: v, T: e.Outer[i].Type(), outer: true}
	}
	return bindSubSelect(ctx, e.Select, cat, e.currentDB, e.args, &outerValues{keys: e.keys, lits: lits})
}

// outerScope resolves a name a query's own FROM does not have: the scope
// of the query around it. ok is false when the name is not there either.
type outerScope interface {
	resolve(c *ColumnRef) (e Expr, ok bool)
}

// correlation is the outer scope of a subquery's first binding: names
// resolve in the enclosing binder and are collected as the subquery's
// Outer list.
type correlation struct {
	parent *binder
	keys   []string
	outer  []Expr
}

func (s *correlation) resolve(c *ColumnRef) (Expr, bool) {
	key := outerKey(c)
	for i, k := range s.keys {
		if k == key {
			return &OuterRef{Slot: i, Name: c.Name, T: s.outer[i].Type()}, true
		}
	}
	e, err := s.parent.column(c)
	if err != nil {
		return nil, false
	}
	s.keys = append(s.keys, key)
	s.outer = append(s.outer, e)
	return &OuterRef{Slot: len(s.outer) - 1, Name: c.Name, T: e.Type()}, true
}

// outerValues is the outer scope of a correlated subquery bound for one
// tuple of outer values.
type outerValues struct {
	keys []string
	lits []*Literal
}

func (s *outerValues) resolve(c *ColumnRef) (Expr, bool) {
	key := outerKey(c)
	for i, k := range s.keys {
		if k == key {
			return s.lits[i], true
		}
	}
	return nil, false
}

// outerKey is a column reference as written, which decides how it
// resolves.
func outerKey(c *ColumnRef) string {
	return strings.ToLower(c.Qualifier) + "\x00" + strings.ToLower(c.Name)
}

// column resolves a column reference: in the query's own FROM first, then,
// in a subquery, in the queries around it. @@name is a system variable.
func (b *binder) column(c *ColumnRef) (Expr, error) {
	if c.Qualifier == "" && strings.HasPrefix(c.Name, "@") {
		return b.variable(c)
	}
	e, err := b.ownColumn(c)
	if err != nil && b.outer != nil && errors.Is(err, metadata.ErrNotFound) {
		if oe, ok := b.outer.resolve(c); ok {
			return oe, nil
		}
	}
	return e, err
}

// bindSubSelect binds the inner query of a subquery, whose outer scope
// resolves what its own FROM does not have.
func bindSubSelect(ctx context.Context, s *Select, cat Catalog, currentDB string, args []Arg, outer outerScope) (*SelectPlan, error) {
	if err := planHints(s.Hints); err != nil {
		return nil, err
	}
	// A SELECT's subqueries were expanded with it; those of UPDATE and
	// DELETE, and a correlated one bound again, are expanded here (again:
	// expanding is idempotent).
	s, err := expandNames(ctx, s, cat, currentDB)
	if err != nil {
		return nil, err
	}
	return bindSelectScoped(ctx, s, cat, currentDB, args, rules, outer)
}

// planHints refuses hints on a subquery: they configure the scan of one
// statement, and a subquery's scan has no way to take them yet.
func planHints(h map[string]string) error {
	if len(h) > 0 {
		return unsupported("an OPTIONS hint in a subquery")
	}
	return nil
}

// subScope is what binding a statement's subqueries needs: the catalog to
// resolve their tables, and the scope around the query being bound (nil
// at the top).
type subScope struct {
	cat   Catalog
	outer outerScope
	// from resolves names over the query's FROM tree (see scope); nil
	// for one plain table.
	from *scope
}

// bindSubquery binds a subquery of the expression being bound.
func (b *binder) bindSubquery(x *Subquery) (Expr, error) {
	if b.cat == nil {
		return nil, unsupported("a subquery in %s", b.clause)
	}
	out := &Subquery{Kind: x.Kind, Not: x.Not, Op: x.Op, Select: x.Select, Text: x.Text, args: b.args, currentDB: b.currentDB}
	if x.E != nil {
		e, err := b.bind(x.E)
		if err != nil {
			return nil, err
		}
		out.E = e
	}
	corr := &correlation{parent: b}
	// The inner query binds with its own clause state; the enclosing
	// binder's clause is what its names resolve with.
	plan, err := bindSubSelect(b.ctx, x.Select, b.cat, b.currentDB, b.args, corr)
	if err != nil {
		return nil, err
	}
	out.Plan, out.Outer, out.keys = plan, corr.outer, corr.keys
	if err := checkOuterAggregates(plan); err != nil {
		return nil, err
	}
	if x.Kind != SubExists && len(plan.Output) != 1 {
		return nil, errorf(metadata.ErrInvalidValue, "subquery %s returns %d columns; one is needed here", x, len(plan.Output))
	}
	switch x.Kind {
	case SubScalar:
		out.T = plan.Output[0].Expr.Type()
	case SubIn, SubAny, SubAll:
		if err := checkComparable(out.E, plan.Output[0].Expr); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func orDefault(db string) string {
	if db == "" {
		return metadata.DefaultDatabase
	}
	return db
}

// The parser has no ANY, SOME or ALL before a subquery. parseDML turns
// `op ANY (SELECT ...)` into `op <name>((SELECT ...))`, a call of a
// function whose name no statement can spell (quantifierCall refuses it
// as written), and the converter turns that call back into a Subquery.
const (
	anyCall = "any subquery"
	allCall = "all subquery"
)

// quantifierEdits returns the edits that rewrite toks[i], an ANY, SOME or
// ALL right after a comparison operator and before a parenthesis, for
// the parser; ok is false when toks[i] is not such a quantifier.
func quantifierEdits(toks []token, i int) (edits []edit, ok bool) {
	t := toks[i]
	if t.kind != tokIdent || i == 0 || i+1 >= len(toks) {
		return nil, false
	}
	name := allCall
	switch strings.ToUpper(t.text) {
	case "ANY", "SOME":
		name = anyCall
	case "ALL":
	default:
		return nil, false
	}
	prev, next := toks[i-1], toks[i+1]
	if prev.kind != tokPunct || !isComparison(prev.text) || next.kind != tokPunct || next.text != "(" {
		return nil, false
	}
	depth := 0
	for j := i + 1; j < len(toks) && toks[j].kind != tokEOF; j++ {
		if toks[j].kind != tokPunct {
			continue
		}
		switch toks[j].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return []edit{
					{pos: t.pos, end: t.end, text: "`" + name + "`("},
					{pos: toks[j].end, end: toks[j].end, text: ")"},
				}, true
			}
		}
	}
	return nil, false
}

func isComparison(op string) bool {
	switch op {
	case "=", "<>", "!=", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// quantifierCall reports whether t is a quoted name the quantifier rewrite
// uses, which a statement may not use itself.
func quantifierCall(t token) bool {
	return t.kind == tokQuotedIdent && (strings.EqualFold(t.text, anyCall) || strings.EqualFold(t.text, allCall))
}

// quantifierAt reports whether toks[i] is ANY, SOME or ALL before a
// subquery (see quantifierEdits).
func quantifierAt(toks []token, i int) bool {
	_, ok := quantifierEdits(toks, i)
	return ok
}

// displayText is the parser's rendering of a subquery with the calls of
// the quantifier rewrite turned back into ANY and ALL.
func displayText(s string) string {
	toks, err := lexAll(s, true)
	if err != nil {
		return s
	}
	var edits []edit
	for i := 0; i+2 < len(toks); i++ {
		// The parser prints the call's name unquoted, as two words.
		t, open := toks[i], i+2
		if t.kind != tokIdent || toks[i+1].kind != tokIdent || !strings.EqualFold(toks[i+1].text, "subquery") || toks[open].text != "(" {
			continue
		}
		var word string
		switch strings.ToLower(t.text) {
		case "any":
			word = "any "
		case "all":
			word = "all "
		default:
			continue
		}
		depth := 0
		for j := open; j < len(toks) && toks[j].kind != tokEOF; j++ {
			if toks[j].kind != tokPunct {
				continue
			}
			if toks[j].text == "(" {
				depth++
			} else if toks[j].text == ")" {
				if depth--; depth == 0 {
					edits = append(edits, edit{pos: t.pos, end: toks[open].end, text: word},
						edit{pos: toks[j].pos, end: toks[j].end})
					break
				}
			}
		}
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].pos < edits[j].pos })
	out, _ := applyEdits(s, 0, len(s), edits)
	return out
}

// checkOuterAggregates refuses an aggregate in a subquery that reads only
// the enclosing query's columns: in MySQL that aggregate belongs to the
// enclosing query (SELECT (SELECT SUM(t.a) FROM u) FROM t sums t.a over
// t), which a subquery run per outer row cannot compute.
func checkOuterAggregates(p *SelectPlan) error {
	var bad *Func
	visit := func(e Expr) {
		Walk(e, func(x Expr) bool {
			f, ok := x.(*Func)
			if !ok || !aggregates[f.Name] || f.Star || bad != nil {
				return bad == nil
			}
			inner := false
			for _, a := range f.Args {
				Walk(a, func(y Expr) bool {
					if _, ok := y.(*ColumnRef); ok {
						inner = true
					}
					return !inner
				})
			}
			if !inner && hasOuterRef(f) {
				bad = f
			}
			return bad == nil
		})
	}
	for _, o := range p.Output {
		visit(o.Expr)
	}
	visit(p.Having)
	for _, o := range p.OrderBy {
		visit(o.Expr)
	}
	if bad != nil {
		return atName(bad.Name, unsupported("aggregate %s of the enclosing query's columns inside a subquery", bad))
	}
	return nil
}
