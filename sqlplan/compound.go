package sqlplan

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Set operations. xwb1989/sqlparser reads UNION but not INTERSECT or
// EXCEPT, so a query with a set operation outside parentheses is split
// here, by the lexer's tokens, at those keywords: each SELECT between them
// goes to the parser on its own, and the operators, parentheses and the
// trailing ORDER BY / LIMIT of the whole are read from the tokens. One in
// parentheses inside a SELECT (a derived table, a subquery) is read here
// too, by parseDML, before the parser reads the rest.
// INTERSECT binds tighter than UNION and EXCEPT, which associate to the
// left (the SQL standard; MySQL 8.0.31 and later).

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind uint8

const (
	SetUnion SetOpKind = iota + 1
	SetIntersect
	SetExcept
)

func (k SetOpKind) String() string {
	switch k {
	case SetUnion:
		return "UNION"
	case SetIntersect:
		return "INTERSECT"
	case SetExcept:
		return "EXCEPT"
	}
	return "SetOpKind(" + strconv.Itoa(int(k)) + ")"
}

// article is "a UNION", "an INTERSECT", "an EXCEPT".
func (k SetOpKind) article() string {
	if k == SetUnion {
		return "a " + k.String()
	}
	return "an " + k.String()
}

// SetOperand is one side of a set operation: a *Select or a *Compound.
type SetOperand interface {
	Statement
	isSetOperand()
}

func (*Select) isSetOperand()   {}
func (*Compound) isSetOperand() {}

// Compound is Left UNION|INTERSECT|EXCEPT [ALL] Right, with the ORDER BY,
// LIMIT and OFFSET of its result. An operand keeps its own ORDER BY and
// LIMIT only when it was written in parentheses.
type Compound struct {
	Kind        SetOpKind
	All         bool
	Left, Right SetOperand
	// OrderBy keys name output columns (a ColumnRef by name) or their
	// positions (an integer Literal).
	OrderBy []OrderItem
	// Limit and Offset are nil when absent; either may be a Param.
	Limit, Offset Expr
	// With are the common table expressions of WITH ... before the set
	// operation; nil without WITH (and on every inner Compound).
	With []CTE
}

func (*Compound) isStatement() {}

// NumInput counts the placeholders of every branch and of LIMIT/OFFSET.
func (c *Compound) NumInput() int { return countInputs(c.exprs()...) }

func (c *Compound) exprs() []Expr {
	es := withExprs(c.With)
	for _, o := range []SetOperand{c.Left, c.Right} {
		switch x := o.(type) {
		case *Select:
			es = append(es, x.exprs()...)
		case *Compound:
			es = append(es, x.exprs()...)
		}
	}
	es = append(es, c.Limit, c.Offset)
	for _, o := range c.OrderBy {
		es = append(es, o.Expr)
	}
	return es
}

// Selects returns the SELECTs of the compound, left to right.
func (c *Compound) Selects() []*Select {
	var out []*Select
	for _, o := range []SetOperand{c.Left, c.Right} {
		switch x := o.(type) {
		case *Select:
			out = append(out, x)
		case *Compound:
			out = append(out, x.Selects()...)
		}
	}
	return out
}

func (c *Compound) String() string {
	operand := func(o SetOperand) string {
		if s, ok := o.(*Select); ok && len(s.OrderBy) == 0 && s.Limit == nil && s.Offset == nil {
			return s.String()
		}
		return "(" + o.String() + ")"
	}
	var b strings.Builder
	b.WriteString(formatWith(c.With))
	b.WriteString(operand(c.Left) + " " + c.Kind.String())
	if c.All {
		b.WriteString(" ALL")
	}
	b.WriteString(" " + operand(c.Right))
	if len(c.OrderBy) > 0 {
		keys := make([]string, len(c.OrderBy))
		for i, o := range c.OrderBy {
			keys[i] = o.Expr.String()
			if o.Desc {
				keys[i] += " DESC"
			}
		}
		b.WriteString(" ORDER BY " + strings.Join(keys, ", "))
	}
	if c.Limit != nil {
		b.WriteString(" LIMIT " + c.Limit.String())
	}
	if c.Offset != nil {
		b.WriteString(" OFFSET " + c.Offset.String())
	}
	return b.String()
}

func setOpOf(t token) (SetOpKind, bool) {
	if t.kind != tokIdent {
		return 0, false
	}
	switch strings.ToUpper(t.text) {
	case "UNION":
		return SetUnion, true
	case "INTERSECT":
		return SetIntersect, true
	case "EXCEPT":
		return SetExcept, true
	}
	return 0, false
}

// hasSetOp reports whether toks hold a set operation outside parentheses.
func hasSetOp(toks []token) bool {
	depth := 0
	for _, t := range toks {
		switch {
		case isPunct(t, "("):
			depth++
		case isPunct(t, ")"):
			depth--
		case depth == 0:
			if _, ok := setOpOf(t); ok {
				return true
			}
		}
	}
	return false
}

// parseSetQuery parses a query: a SELECT, or SELECTs joined by set
// operations, or a parenthesised query: the text src[start:end] whose
// tokens are toks (offsets in src, ending with a tokEOF token at end). ps
// carries the placeholders of the statement's parts before it.
func parseSetQuery(src string, start int, toks []token, ps *paramStyle) (Statement, error) {
	if !hasSetOp(toks) && !isPunct(toks[0], "(") {
		return parseDML(src, start, toks, ps)
	}
	p, err := newCompoundParser(src, 0, toks, ps)
	if err != nil {
		return nil, err
	}
	return p.group(0, len(p.toks)-1)
}

// compoundParser reads a query with set operations from its tokens.
type compoundParser struct {
	src  string
	base int
	// toks end with tokEOF; a trailing ';' is dropped.
	toks []token
	// params holds the placeholder of each placeholder token, numbered
	// over the whole statement.
	params map[int]*Param
	// questions[i] counts the ? placeholders before toks[i], by which the
	// parser's own numbering of a SELECT's ? is shifted.
	questions []int
	// style is the statement's placeholder style (see paramStyle).
	style byte
}

func newCompoundParser(text string, base int, toks []token, ps *paramStyle) (*compoundParser, error) {
	p := &compoundParser{src: text, base: base, toks: toks, params: map[int]*Param{}}
	for i, t := range toks {
		if isPunct(t, ";") {
			if toks[i+1].kind != tokEOF {
				return nil, p.errAt(i+1, "only one statement is allowed")
			}
			toks = append(toks[:i:i], toks[len(toks)-1])
			break
		}
	}
	p.toks = toks
	q := ps.questions
	for i, t := range toks {
		p.questions = append(p.questions, q)
		if t.kind != tokParam {
			continue
		}
		param, err := ps.param(text, t)
		if err != nil {
			return nil, shiftErr(err, base)
		}
		p.params[i] = param
		if t.text == "?" {
			q++
		}
	}
	p.style = ps.style
	return p, nil
}

func (p *compoundParser) errAt(i int, msg string) error {
	t := p.toks[i]
	if t.kind == tokEOF {
		return &SyntaxError{Pos: p.base + t.pos, Msg: msg}
	}
	return &SyntaxError{Pos: p.base + t.pos, Near: p.src[t.pos:t.end], Msg: msg}
}

// closing returns the index of the ')' that closes the '(' at toks[i], or
// -1 when it is not closed before hi.
func (p *compoundParser) closing(i, hi int) int {
	depth := 0
	for j := i; j < hi; j++ {
		switch {
		case isPunct(p.toks[j], "("):
			depth++
		case isPunct(p.toks[j], ")"):
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// tailStart returns the index of the first ORDER BY or LIMIT outside
// parentheses in toks[lo:hi], or hi.
func (p *compoundParser) tailStart(lo, hi int) int {
	depth := 0
	for j := lo; j < hi; j++ {
		t := p.toks[j]
		switch {
		case isPunct(t, "("):
			depth++
		case isPunct(t, ")"):
			depth--
		case depth == 0 && (isWord(t, "ORDER") && j+1 < hi && isWord(p.toks[j+1], "BY") || isWord(t, "LIMIT")):
			return j
		}
	}
	return hi
}

type setOpTok struct {
	kind SetOpKind
	all  bool
}

// group parses toks[lo:hi]: operands joined by set operations, then the
// ORDER BY and LIMIT of the whole.
func (p *compoundParser) group(lo, hi int) (SetOperand, error) {
	if lo >= hi {
		return nil, p.errAt(lo, "expected SELECT")
	}
	type span struct{ lo, hi int }
	var spans []span
	var ops []setOpTok
	depth, start := 0, lo
	for j := lo; j < hi; j++ {
		t := p.toks[j]
		switch {
		case isPunct(t, "("):
			depth++
		case isPunct(t, ")"):
			if depth--; depth < 0 {
				return nil, p.errAt(j, "unbalanced parenthesis")
			}
		case depth == 0:
			kind, ok := setOpOf(t)
			if !ok {
				continue
			}
			spans = append(spans, span{start, j})
			op := setOpTok{kind: kind}
			if j+1 < hi && isWord(p.toks[j+1], "ALL") {
				op.all = true
				j++
			} else if j+1 < hi && isWord(p.toks[j+1], "DISTINCT") {
				j++
			}
			ops = append(ops, op)
			start = j + 1
		}
	}
	spans = append(spans, span{start, hi})

	operands := make([]SetOperand, len(spans))
	tail := hi
	for k, s := range spans {
		last := k == len(spans)-1
		if s.lo >= s.hi {
			return nil, p.errAt(s.lo, "expected SELECT")
		}
		if isPunct(p.toks[s.lo], "(") {
			end := p.closing(s.lo, s.hi)
			if end < 0 {
				return nil, p.errAt(s.lo, "unbalanced parenthesis")
			}
			if end+1 < s.hi {
				if !last || p.tailStart(end+1, s.hi) != end+1 {
					return nil, p.errAt(end+1, "expected UNION, INTERSECT or EXCEPT after a parenthesised query")
				}
				tail = end + 1
			}
			o, err := p.group(s.lo+1, end)
			if err != nil {
				return nil, err
			}
			operands[k] = o
			continue
		}
		if !isWord(p.toks[s.lo], "SELECT") {
			return nil, p.errAt(s.lo, "expected SELECT")
		}
		selHi := s.hi
		if t := p.tailStart(s.lo, s.hi); t < s.hi && len(spans) > 1 {
			if !last {
				return nil, p.errAt(t, "ORDER BY and LIMIT of one SELECT of "+ops[k].kind.article()+" need parentheses around that SELECT")
			}
			selHi, tail = t, t
		}
		sel, err := p.selectAt(s.lo, selHi)
		if err != nil {
			return nil, err
		}
		operands[k] = sel
	}

	// INTERSECT first, then UNION and EXCEPT, each to the left.
	terms := []SetOperand{operands[0]}
	var termOps []setOpTok
	for k, op := range ops {
		if op.kind == SetIntersect {
			n := len(terms) - 1
			terms[n] = &Compound{Kind: op.kind, All: op.all, Left: terms[n], Right: operands[k+1]}
			continue
		}
		terms = append(terms, operands[k+1])
		termOps = append(termOps, op)
	}
	root := terms[0]
	for k, op := range termOps {
		root = &Compound{Kind: op.kind, All: op.all, Left: root, Right: terms[k+1]}
	}
	if tail == hi {
		return root, nil
	}
	orderBy, limit, offset, err := p.tail(tail, hi)
	if err != nil {
		return nil, err
	}
	switch x := root.(type) {
	case *Compound:
		if len(x.OrderBy) > 0 || x.Limit != nil || x.Offset != nil {
			return nil, p.errAt(tail, "a query takes one ORDER BY and one LIMIT")
		}
		x.OrderBy, x.Limit, x.Offset = orderBy, limit, offset
	case *Select:
		// (SELECT ...) ORDER BY ...: the SELECT's own, when it has none.
		if len(x.OrderBy) > 0 || x.Limit != nil || x.Offset != nil {
			return nil, unsupported("ORDER BY or LIMIT both inside and after a parenthesised SELECT")
		}
		x.OrderBy, x.Limit, x.Offset = orderBy, limit, offset
	}
	return root, nil
}

// selectAt parses toks[lo:hi], a SELECT, with the parser, numbering its
// placeholders as the statement does.
func (p *compoundParser) selectAt(lo, hi int) (*Select, error) {
	from, to := p.toks[lo].pos, p.toks[hi-1].end
	// The SELECT's ? count on from those before it in the statement.
	ps := &paramStyle{style: p.style, questions: p.questions[lo]}
	st, err := parseDML(p.src, from, window(p.toks, lo, hi, to), ps)
	if err != nil {
		return nil, err
	}
	sel, ok := st.(*Select)
	if !ok {
		return nil, p.errAt(lo, "expected SELECT")
	}
	return sel, nil
}

// tail reads ORDER BY keys and LIMIT [offset,] count | LIMIT count OFFSET
// offset from toks[lo:hi]. The keys of a set operation's ORDER BY name
// its output columns or give their positions, as in the SQL standard.
func (p *compoundParser) tail(lo, hi int) (order []OrderItem, limit, offset Expr, err error) {
	i := lo
	if isWord(p.toks[i], "ORDER") {
		i += 2
		for {
			if i >= hi {
				return nil, nil, nil, p.errAt(i, "expected an ORDER BY key")
			}
			t := p.toks[i]
			var key Expr
			switch {
			case (t.kind == tokIdent || t.kind == tokQuotedIdent) && !(i+1 < hi && isPunct(p.toks[i+1], ".")) && !(i+1 < hi && isPunct(p.toks[i+1], "(")):
				if t.kind == tokIdent && (isWord(t, "LIMIT") || isWord(t, "ASC") || isWord(t, "DESC")) {
					return nil, nil, nil, p.errAt(i, "expected an ORDER BY key")
				}
				key = &ColumnRef{Name: t.text, Index: -1}
			case t.kind == tokNumber:
				n, perr := strconv.ParseInt(t.text, 10, 64)
				if perr != nil {
					return nil, nil, nil, p.errAt(i, "expected a column position")
				}
				key = &Literal{Value: n, T: metadata.BigIntType()}
			default:
				return nil, nil, nil, &PosError{Pos: p.base + t.pos, Err: unsupported("ORDER BY of a set operation by anything but an output column's name or position")}
			}
			i++
			if i < hi && !isWord(p.toks[i], "ASC") && !isWord(p.toks[i], "DESC") && !isPunct(p.toks[i], ",") && !isWord(p.toks[i], "LIMIT") {
				return nil, nil, nil, &PosError{Pos: p.base + t.pos, Err: unsupported("ORDER BY of a set operation by anything but an output column's name or position")}
			}
			desc := false
			if i < hi && (isWord(p.toks[i], "ASC") || isWord(p.toks[i], "DESC")) {
				desc = isWord(p.toks[i], "DESC")
				i++
			}
			order = append(order, OrderItem{Expr: key, Desc: desc})
			if i < hi && isPunct(p.toks[i], ",") {
				i++
				continue
			}
			break
		}
	}
	if i < hi && isWord(p.toks[i], "LIMIT") {
		i++
		first, err := p.count(i, hi)
		if err != nil {
			return nil, nil, nil, err
		}
		i++
		limit = first
		switch {
		case i < hi && isPunct(p.toks[i], ","):
			if limit, err = p.count(i+1, hi); err != nil {
				return nil, nil, nil, err
			}
			offset = first
			i += 2
		case i < hi && isWord(p.toks[i], "OFFSET"):
			if offset, err = p.count(i+1, hi); err != nil {
				return nil, nil, nil, err
			}
			i += 2
		}
	}
	if i < hi {
		return nil, nil, nil, p.errAt(i, "unexpected text after the query")
	}
	return order, limit, offset, nil
}

// count reads the number or placeholder of LIMIT or OFFSET at toks[i].
func (p *compoundParser) count(i, hi int) (Expr, error) {
	if i >= hi {
		return nil, p.errAt(i, "expected a number")
	}
	t := p.toks[i]
	switch t.kind {
	case tokNumber:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, p.errAt(i, "expected a whole number")
		}
		return &Literal{Value: n, T: metadata.BigIntType()}, nil
	case tokParam:
		return p.params[i], nil
	}
	return nil, p.errAt(i, "expected a number")
}

// parseDMLSetOps parses a SELECT, INSERT, UPDATE or DELETE statement from
// its tokens, reading set operations outside parentheses here and
// everything else with parseDML.
func parseDMLSetOps(src string, toks []token) (Statement, error) {
	if isPunct(toks[0], "(") || isWord(toks[0], "SELECT") {
		return parseSetQuery(src, 0, toks, &paramStyle{})
	}
	return parseDML(src, 0, toks, nil)
}

// CompoundPlan is a bound set operation. Every SELECT below it yields the
// same number of columns, converted to the types they have in common, so
// that both sides of each operation hold columns of exactly Output's
// types. It is inert and safe to share.
type CompoundPlan struct {
	Kind        SetOpKind
	All         bool
	Left, Right CompoundBranch
	// Output are the result's columns: the names of the first SELECT's,
	// the types common to every SELECT's. Output[i].Expr is a ColumnRef
	// with Index i.
	Output []OutputColumn
	// OrderBy keys are ColumnRefs over Output.
	OrderBy []OrderItem
	// Limit is -1 without LIMIT; Offset is 0 without OFFSET.
	Limit, Offset int64
}

// CompoundBranch is one side of a set operation: a SELECT (with the
// conversion of its outputs) or a nested set operation.
type CompoundBranch struct {
	Select *SelectPlan
	// Convert holds, for a SELECT, one expression per output over the
	// SELECT's outputs (ColumnRef Index i is output i): the output itself,
	// or its CAST to the common type.
	Convert  []Expr
	Compound *CompoundPlan
}

// Selects returns the SELECTs below the plan, left to right.
func (p *CompoundPlan) Selects() []*SelectPlan {
	var out []*SelectPlan
	for _, b := range []CompoundBranch{p.Left, p.Right} {
		if b.Select != nil {
			out = append(out, b.Select)
		} else {
			out = append(out, b.Compound.Selects()...)
		}
	}
	return out
}

// BindCompound binds every SELECT of c as BindSelect does, then the
// columns they share and the ORDER BY and LIMIT of each set operation.
func BindCompound(ctx context.Context, c *Compound, cat Catalog, currentDB string, args []Arg) (*CompoundPlan, error) {
	c, err := expandCompound(ctx, c, cat, currentDB)
	if err != nil {
		return nil, err
	}
	p, err := bindCompoundTree(ctx, c, cat, currentDB, args)
	if err != nil {
		return nil, err
	}
	sels := p.Selects()
	n := len(sels[0].Output)
	common := make([]metadata.DataType, n)
	for i := range common {
		ts := make([]metadata.DataType, len(sels))
		for k, s := range sels {
			ts[k] = s.Output[i].Expr.Type()
		}
		t, ok := commonType(ts)
		if !ok {
			// MySQL reads mixed kinds as text when one is text.
			if !slices.ContainsFunc(ts, metadata.DataType.IsString) || slices.ContainsFunc(ts, metadata.DataType.IsNested) {
				return nil, errorf(metadata.ErrUnsupported, "column %d of %s mixes %s", i+1, c.Kind.article(), typeList(ts))
			}
			t = metadata.StringType()
		}
		common[i] = t
	}
	if err := p.finish(common); err != nil {
		return nil, err
	}
	return p, nil
}

// bindCompoundTree binds the SELECTs and checks their column counts.
func bindCompoundTree(ctx context.Context, c *Compound, cat Catalog, currentDB string, args []Arg) (*CompoundPlan, error) {
	p := &CompoundPlan{Kind: c.Kind, All: c.All, Limit: -1}
	width := [2]int{}
	for k, o := range []SetOperand{c.Left, c.Right} {
		var b CompoundBranch
		switch x := o.(type) {
		case *Select:
			sp, err := BindSelect(ctx, x, cat, currentDB, args)
			if err != nil {
				return nil, err
			}
			b.Select, width[k] = sp, len(sp.Output)
		case *Compound:
			cp, err := bindCompoundTree(ctx, x, cat, currentDB, args)
			if err != nil {
				return nil, err
			}
			b.Compound, width[k] = cp, len(cp.Selects()[0].Output)
		}
		if k == 0 {
			p.Left = b
		} else {
			p.Right = b
		}
	}
	if width[0] != width[1] {
		return nil, errorf(metadata.ErrInvalidValue, "each SELECT of %s must have the same number of columns, %d and %d", c.Kind.article(), width[0], width[1])
	}
	var err error
	if p.OrderBy, err = bindSetOrder(c, p.Left); err != nil {
		return nil, err
	}
	b := &binder{args: args, clause: inLimit}
	if c.Limit != nil {
		if p.Limit, err = b.count(c.Limit, "LIMIT"); err != nil {
			return nil, err
		}
	}
	if c.Offset != nil {
		if p.Offset, err = b.count(c.Offset, "OFFSET"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// bindSetOrder resolves the ORDER BY keys of a set operation against the
// output names of its first SELECT, or positions; types are filled in by
// finish.
func bindSetOrder(c *Compound, first CompoundBranch) ([]OrderItem, error) {
	if len(c.OrderBy) == 0 {
		return nil, nil
	}
	var names []string
	for b := first; ; b = b.Compound.Left {
		if b.Select != nil {
			for _, o := range b.Select.Output {
				names = append(names, o.Name)
			}
			break
		}
	}
	var out []OrderItem
	for _, o := range c.OrderBy {
		col := -1
		switch x := o.Expr.(type) {
		case *ColumnRef:
			if x.Qualifier != "" {
				return nil, unsupported("ORDER BY %s.%s of a set operation, which names its output columns without a table", x.Qualifier, x.Name)
			}
			for i, n := range names {
				if strings.EqualFold(n, x.Name) {
					col = i
					break
				}
			}
			if col < 0 {
				return nil, atName(x.Name, errorf(metadata.ErrNotFound, "ORDER BY %s names no column of %s (its columns: %s)", quoteIdent(x.Name), c.Kind.article(), quoteIdents(names)))
			}
		case *Literal:
			n, _ := x.Value.(int64)
			if n < 1 || int(n) > len(names) {
				return nil, errorf(metadata.ErrNotFound, "ORDER BY position %s is not in the select list (1 to %d)", x, len(names))
			}
			col = int(n) - 1
		default:
			return nil, unsupported("ORDER BY %s of a set operation", o.Expr)
		}
		out = append(out, OrderItem{Expr: &ColumnRef{Name: names[col], Index: col}, Desc: o.Desc})
	}
	return out, nil
}

// finish gives every node its output columns of the common types and
// every SELECT the conversion of its outputs to them.
func (p *CompoundPlan) finish(common []metadata.DataType) error {
	first := p.Selects()[0]
	p.Output = make([]OutputColumn, len(common))
	for i, t := range common {
		p.Output[i] = OutputColumn{Name: first.Output[i].Name, Expr: &ColumnRef{Name: first.Output[i].Name, Index: i, T: t}}
	}
	for k := range p.OrderBy {
		c := p.OrderBy[k].Expr.(*ColumnRef)
		p.OrderBy[k].Expr = &ColumnRef{Name: c.Name, Index: c.Index, T: common[c.Index]}
	}
	for _, b := range []*CompoundBranch{&p.Left, &p.Right} {
		if b.Compound != nil {
			if err := b.Compound.finish(common); err != nil {
				return err
			}
			continue
		}
		b.Convert = make([]Expr, len(common))
		for i, o := range b.Select.Output {
			from := o.Expr.Type()
			ref := &ColumnRef{Name: o.Name, Index: i, T: from}
			switch {
			case from.Equal(common[i]) || common[i].Root == 0:
				b.Convert[i] = ref
			case from.IsString() && common[i].IsString():
				// CHAR and STRING share their Arrow form: a new name only.
				b.Convert[i] = &ColumnRef{Name: o.Name, Index: i, T: common[i]}
			default:
				b.Convert[i] = &Cast{E: ref, T: common[i]}
			}
		}
	}
	return nil
}

// FormatCompound prints a set operation as EXPLAIN does: its ORDER BY and
// LIMIT, then a line naming the operation, each node's children indented
// by two spaces under it; leaf prints the plan of one SELECT.
func FormatCompound(p *CompoundPlan, leaf func(*SelectPlan) []string) []string {
	return FormatCompoundNotes(p, leaf, nil)
}

// FormatCompoundNotes is FormatCompound with a note after the first line
// of each set operation (note(p), EXPLAIN ANALYZE's rows and time of its
// result); leaf notes the SELECTs. note may be nil.
func FormatCompoundNotes(p *CompoundPlan, leaf func(*SelectPlan) []string, note func(node any) string) []string {
	if note == nil {
		note = func(any) string { return "" }
	}
	var lines []string
	depth := 0
	node := func(format string, args ...any) {
		lines = append(lines, strings.Repeat("  ", depth)+fmt.Sprintf(format, args...))
		depth++
	}
	order := func() string {
		parts := make([]string, len(p.OrderBy))
		for i, o := range p.OrderBy {
			parts[i] = o.Expr.String()
			if o.Desc {
				parts[i] += " DESC"
			}
		}
		return strings.Join(parts, ", ")
	}
	offset := ""
	if p.Offset > 0 {
		offset = fmt.Sprintf(" offset %d", p.Offset)
	}
	switch {
	case len(p.OrderBy) > 0 && p.Limit >= 0:
		node("TopN: %d by %s%s", p.Limit+p.Offset, order(), offset)
	case len(p.OrderBy) > 0:
		if p.Offset > 0 {
			node("Offset: %d", p.Offset)
		}
		node("Sort: %s", order())
	case p.Limit >= 0 || p.Offset > 0:
		node("Limit: %d%s", p.Limit, offset)
	}
	name := strings.ToUpper(p.Kind.String()[:1]) + strings.ToLower(p.Kind.String()[1:])
	if p.All {
		name += " All"
	}
	node("%s", name)
	lines[0] += note(p)
	for _, b := range []CompoundBranch{p.Left, p.Right} {
		var sub []string
		if b.Compound != nil {
			sub = FormatCompoundNotes(b.Compound, leaf, note)
		} else {
			sub = leaf(b.Select)
		}
		for _, l := range sub {
			lines = append(lines, strings.Repeat("  ", depth)+l)
		}
	}
	return lines
}

// compoundRows is a set operation as the plan of a derived table: its
// rows, with its Output.
func compoundRows(cp *CompoundPlan) *SelectPlan {
	return &SelectPlan{Output: cp.Output, Limit: -1, Compound: cp}
}
