package sqlplan

import (
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"

	"github.com/flusslite/fluss/metadata"
)

// This file is the one seam to xwb1989/sqlparser (with dml.go, for UPDATE
// and DELETE): SELECT, INSERT, UPDATE and DELETE text goes through it, and its AST is converted once into our own structs.
// Its quirks, handled here:
//   - it numbers each ? as :v1, :v2, ... and cannot lex $1, so $N is
//     rewritten to :vN before parsing (outside strings and comments) and
//     both map back to Param{Ordinal: N};
//   - "text" in double quotes is a string literal in its MySQL dialect;
//   - names containing '$' (`t$changelog`) must be backquoted;
//   - it refuses the set quantifier ALL (SELECT ALL, COUNT(ALL x)), so
//     that token is dropped before parsing (quantifier.go);
//   - its error positions count from 1 and point past the offending token;
//     they are mapped back to a byte offset in the caller's text;
//   - it reads UNION but not INTERSECT or EXCEPT: a parenthesised query
//     holding them (a derived table, a subquery, an operand of a UNION) is
//     read from its tokens by compound.go, and the parser sees in its
//     place a SELECT * FROM a reserved name that setOperand swaps back.

// parseDML parses SELECT, INSERT, UPDATE or DELETE text with
// xwb1989/sqlparser: the text src[start:end], where toks are its tokens
// (from lexStatement, with their offsets in src) and end is the offset of
// the last one, a tokEOF token. Errors carry offsets in src, so that they
// point into the caller's text however the query is embedded in it (after
// EXPLAIN, in WITH, in CREATE VIEW). ps carries the placeholders of the
// statement's earlier parts (nil for none), so that the ? of a WITH's
// query count on from those of its common table expressions.
func parseDML(src string, start int, toks []token, ps *paramStyle) (stmt Statement, err error) {
	if ps == nil {
		ps = &paramStyle{}
	}
	// The parser numbers the ? of the text it reads from 1; after earlier
	// parts each ? is written as the :vN the parser would give it.
	renumber := ps.questions > 0
	var edits []edit
	var nested map[string]SetOperand
	// cut has the query of toks[lo:hi] read here (see compound.go) and the
	// parser read instead the reserved SELECT *, in parentheses when
	// paren is set; toks[lo:hi] are not looked at again.
	cut := func(lo, hi int, paren bool) error {
		before := ps.questions
		q, err := parseQueryTokens(src, toks[lo].pos, window(toks, lo, hi, toks[hi].pos), ps)
		if err != nil {
			return err
		}
		op, ok := q.(SetOperand)
		if !ok {
			return &PosError{Pos: toks[lo].pos, Err: unsupported("%T as a query", q)}
		}
		if nested == nil {
			nested = map[string]SetOperand{}
		}
		name := nestedPrefix + strconv.Itoa(len(nested))
		nested[name] = op
		e := edit{pos: toks[lo].pos, end: toks[hi-1].end, text: "SELECT * FROM `" + name + "`"}
		if paren {
			e.pos, e.end, e.text = toks[lo-1].pos, toks[hi].end, "("+e.text+")"
		}
		edits = append(edits, e)
		// The ? inside were numbered here; those after count on.
		renumber = renumber || ps.questions > before
		return nil
	}
	end := toks[len(toks)-1].pos
	queryLo, queryHi := insertQuery(toks)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case i == queryLo:
			if err := cut(queryLo, queryHi, false); err != nil {
				return nil, err
			}
			i = queryHi - 1
		case t.kind == tokQuotedIdent && strings.HasPrefix(t.text, nestedPrefix):
			return nil, &SyntaxError{Pos: t.pos, Near: src[t.pos:t.end], Msg: "this name is reserved"}
		case isPunct(t, "(") && parenSetOp(toks, i):
			closing, err := matchingParen(src, toks, i)
			if err != nil {
				return nil, err
			}
			if err := cut(i+1, closing, true); err != nil {
				return nil, err
			}
			i = closing
		case t.kind == tokParam:
			p, err := ps.param(src, t)
			if err != nil {
				return nil, err
			}
			switch {
			case t.text[0] == '$':
				edits = append(edits, edit{pos: t.pos, end: t.end, text: ":v" + t.text[1:]})
			case t.text == "?" && renumber:
				edits = append(edits, edit{pos: t.pos, end: t.end, text: ":v" + strconv.Itoa(p.Ordinal)})
			}
		case t.kind == tokString:
			// MySQL keeps the backslash of \% and \_ so that LIKE sees an
			// escaped wildcard; the parser drops it. Double it for the parser.
			text := src[t.pos:t.end]
			if strings.Contains(text, `\%`) || strings.Contains(text, `\_`) {
				edits = append(edits, edit{pos: t.pos, end: t.end, text: escapeWildcards(text)})
			}
		case t.kind == tokIdent && strings.EqualFold(t.text, "ALL") && setQuantifier(toks, i):
			e, err := dropQuantifier(src, toks, i)
			if err != nil {
				return nil, err
			}
			edits = append(edits, e)
		case isPunct(t, "(") && i > 0 && limitOperand(toks, i-1):
			// MySQL's LIMIT and OFFSET take a number or a placeholder
			// only; the parser would take any expression.
			return nil, &SyntaxError{Pos: t.pos, Near: src[t.pos:t.end], Msg: "LIMIT and OFFSET take a number or a placeholder, not an expression or a subquery"}
		case isWord(t, "INNER") && i > 0 && isWord(toks[i-1], "NATURAL") && isWord(toks[i+1], "JOIN"):
			// MySQL reads NATURAL [INNER] JOIN; the parser knows only
			// NATURAL JOIN, which is the same join.
			edits = append(edits, edit{pos: t.pos, end: t.end})
		case quantifierCall(t):
			return nil, &SyntaxError{Pos: t.pos, Near: src[t.pos:t.end], Msg: "this name is reserved"}
		case t.kind == tokIdent && quantifierAt(toks, i):
			qe, _ := quantifierEdits(toks, i)
			edits = append(edits, qe...)
		case t.kind == tokPunct && t.text == ";":
			if toks[i+1].kind != tokEOF {
				return nil, &SyntaxError{Pos: toks[i+1].pos, Near: src[toks[i+1].pos:toks[i+1].end],
					Msg: "only one statement is allowed"}
			}
			end = t.pos
			toks = toks[:i]
		}
	}
	// The quantifier rewrite inserts text after later edits' positions.
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].pos < edits[j].pos })
	rewritten, posMap := applyEdits(src, start, end, edits)

	defer func() {
		// The parser and its AST are foreign code; a panic on odd input
		// must surface as an error, never crash the caller.
		if r := recover(); r != nil {
			stmt, err = nil, &SyntaxError{Pos: start, Msg: fmt.Sprintf("statement not understood (%v)", r)}
		}
	}()
	ast, perr := sqlparser.ParseStrictDDL(rewritten)
	if perr != nil {
		return nil, mapParseError(perr, src, end, toks, posMap, start)
	}
	c := &converter{style: ps.style, src: rewritten, posMap: posMap, nested: nested}
	switch x := ast.(type) {
	case *sqlparser.Select:
		return c.selectStmt(x)
	case *sqlparser.Insert:
		return c.insert(x)
	case *sqlparser.Union:
		return nil, unsupported("UNION")
	case *sqlparser.ParenSelect:
		return nil, unsupported("a parenthesized SELECT")
	case *sqlparser.Update:
		return c.update(x)
	case *sqlparser.Delete:
		return c.delete(x)
	}
	return nil, unsupported("this statement")
}

// edit replaces text[pos:end] before parsing.
type edit struct {
	pos, end int
	text     string
}

// applyEdits applies edits (in order, not overlapping, within
// [start, end)) to src[start:end] and returns the new text with, for each
// of its offsets and its end, the offset in src it came from.
func applyEdits(src string, start, end int, edits []edit) (string, []int) {
	if len(edits) == 0 {
		posMap := make([]int, end-start+1)
		for i := range posMap {
			posMap[i] = start + i
		}
		return src[start:end], posMap
	}
	var b strings.Builder
	posMap := make([]int, 0, end-start+1)
	last := start
	for _, e := range edits {
		b.WriteString(src[last:e.pos])
		for j := last; j < e.pos; j++ {
			posMap = append(posMap, j)
		}
		b.WriteString(e.text)
		for range len(e.text) {
			posMap = append(posMap, e.pos)
		}
		last = e.end
	}
	b.WriteString(src[last:end])
	for j := last; j <= end; j++ {
		posMap = append(posMap, j)
	}
	return b.String(), posMap
}

// escapeWildcards doubles the backslash of \% and \_ in a quoted string
// as written (a doubled backslash stays as it is).
func escapeWildcards(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\\' && i+1 < len(src) {
			if n := src[i+1]; n == '%' || n == '_' {
				b.WriteString(`\\`)
				b.WriteByte(n)
			} else {
				b.WriteByte(c)
				b.WriteByte(n)
			}
			i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func shiftErr(err error, base int) error {
	if se, ok := err.(*SyntaxError); ok {
		c := *se
		c.Pos += base
		return &c
	}
	return err
}

var positionRE = regexp.MustCompile(`at position (\d+)( near '(?s:.*)')?$`)

// mapParseError turns xwb1989's error text into a SyntaxError at the
// offending token of src; the parser read src[start:end] as edited.
func mapParseError(perr error, src string, end int, toks []token, posMap []int, start int) error {
	m := positionRE.FindStringSubmatch(perr.Error())
	if m == nil {
		return &SyntaxError{Pos: start, Msg: perr.Error()}
	}
	n, _ := strconv.Atoi(m[1])
	// n-1 is the offset just past the offending token in the rewritten
	// text. The parser names the token only when it has text, so a
	// punctuation mark and the end of the input look alike at the end.
	e := min(max(n-1, 0), len(posMap)-1)
	origEnd := posMap[e]
	var last *token
	for i := range toks {
		if toks[i].kind == tokEOF || toks[i].pos >= origEnd {
			break
		}
		last = &toks[i]
	}
	if last == nil || e == len(posMap)-1 && m[2] == "" && last.kind != tokPunct {
		return &SyntaxError{Pos: end, Msg: "unexpected end of statement"}
	}
	se := &SyntaxError{Pos: last.pos, Near: src[last.pos:last.end]}
	if strings.Contains(se.Near, "$") {
		se.Msg = "quote names containing '$' with backquotes, e.g. `t$changelog`"
	}
	return se
}

// converter turns xwb1989's AST into ours.
type converter struct {
	style byte // the placeholder style of the statement
	src   string
	// posMap maps each offset of src, the text the parser read, to its
	// offset in the caller's statement.
	posMap []int
	// nested are the parenthesised set operations parseDML read itself,
	// by the reserved table name the parser saw in their place.
	nested map[string]SetOperand
}

// nestedPrefix starts the table names that stand for a parenthesised set
// operation in the text the parser reads. It holds a NUL byte, which no
// name written in a statement has (parseDML refuses one that does).
const nestedPrefix = "\x00set operation "

// parenSetOp reports whether the '(' at toks[i] opens a query with
// INTERSECT or EXCEPT outside any parentheses of its own: one the parser
// cannot read. A UNION alone it reads.
func parenSetOp(toks []token, i int) bool {
	if n := toks[i+1]; !isWord(n, "SELECT") && !isPunct(n, "(") {
		return false
	}
	depth := 0
	for _, t := range toks[i:] {
		switch {
		case t.kind == tokEOF:
			return false
		case isPunct(t, "("):
			depth++
		case isPunct(t, ")"):
			if depth--; depth == 0 {
				return false
			}
		case depth == 1:
			if k, ok := setOpOf(t); ok && k != SetUnion {
				return true
			}
		}
	}
	return false
}

// limitOperand reports whether the token after toks[i] is where LIMIT
// or OFFSET takes its number: after LIMIT, OFFSET, or the comma of LIMIT
// offset, count.
func limitOperand(toks []token, i int) bool {
	switch t := toks[i]; {
	case isWord(t, "LIMIT"), isWord(t, "OFFSET"):
		return true
	case isPunct(t, ","):
		return i >= 2 && isWord(toks[i-2], "LIMIT")
	}
	return false
}

// insertQuery returns the bounds [lo, hi) of the query of INSERT [INTO]
// t [(cols)] query [ON DUPLICATE KEY UPDATE ...] when the parser cannot
// read it: when it starts with WITH or has INTERSECT or EXCEPT outside
// parentheses. lo is -1 otherwise.
func insertQuery(toks []token) (lo, hi int) {
	if !isWord(toks[0], "INSERT") && !isWord(toks[0], "REPLACE") {
		return -1, 0
	}
	lo, hi = -1, len(toks)-1
	setOp := false
	depth := 0
scan:
	for i, t := range toks[:hi] {
		switch {
		case isPunct(t, "("):
			depth++
		case isPunct(t, ")"):
			depth--
		case depth != 0:
		case lo < 0 && (isWord(t, "SELECT") || isWord(t, "WITH")):
			lo = i
		case lo >= 0 && (isWord(t, "ON") && isWord(toks[i+1], "DUPLICATE") || isPunct(t, ";")):
			hi = i
			break scan
		case lo >= 0:
			if k, ok := setOpOf(t); ok && k != SetUnion {
				setOp = true
			}
		}
	}
	if lo < 0 || !setOp && !isWord(toks[lo], "WITH") {
		return -1, 0
	}
	return lo, hi
}

// nestedOperand returns the set operation that the SELECT * FROM name
// parseDML wrote stands for.
func (c *converter) nestedOperand(s *sqlparser.Select) (SetOperand, bool) {
	if len(c.nested) == 0 || len(s.From) != 1 || len(s.SelectExprs) != 1 {
		return nil, false
	}
	if _, ok := s.SelectExprs[0].(*sqlparser.StarExpr); !ok {
		return nil, false
	}
	t, ok := s.From[0].(*sqlparser.AliasedTableExpr)
	if !ok || !t.As.IsEmpty() {
		return nil, false
	}
	name, ok := t.Expr.(sqlparser.TableName)
	if !ok || !name.Qualifier.IsEmpty() {
		return nil, false
	}
	op, ok := c.nested[name.Name.String()]
	return op, ok
}

func (c *converter) tablePath(n sqlparser.TableName) metadata.TablePath {
	return metadata.TablePath{Database: n.Qualifier.String(), Table: n.Name.String()}
}

func (c *converter) selectStmt(s *sqlparser.Select) (*Select, error) {
	if s.Lock != "" {
		return nil, unsupported("a locking clause (FOR UPDATE, LOCK IN SHARE MODE) inside a query (only the one ending the statement)")
	}
	out := &Select{Distinct: s.Distinct != ""}
	var err error
	if out.Hints, err = c.hints(s.Comments); err != nil {
		return nil, err
	}
	if err := c.from(out, s.From); err != nil {
		return nil, err
	}
	for _, se := range s.SelectExprs {
		switch x := se.(type) {
		case *sqlparser.StarExpr:
			out.Items = append(out.Items, SelectItem{Star: true, Qualifier: x.TableName.Name.String(), Text: "*"})
		case *sqlparser.AliasedExpr:
			e, err := c.expr(x.Expr)
			if err != nil {
				return nil, err
			}
			text := sqlparser.String(x.Expr)
			if _, ok := e.(*Subquery); ok {
				text = displayText(text)
			}
			out.Items = append(out.Items, SelectItem{Expr: e, Alias: x.As.String(), Text: text})
		default:
			return nil, unsupported("select item %s", sqlparser.String(se))
		}
	}
	if s.Where != nil {
		if out.Where, err = c.expr(s.Where.Expr); err != nil {
			return nil, err
		}
	}
	for _, g := range s.GroupBy {
		e, err := c.expr(g)
		if err != nil {
			return nil, err
		}
		out.GroupBy = append(out.GroupBy, e)
	}
	if s.Having != nil {
		if out.Having, err = c.expr(s.Having.Expr); err != nil {
			return nil, err
		}
	}
	for _, o := range s.OrderBy {
		e, err := c.expr(o.Expr)
		if err != nil {
			return nil, err
		}
		out.OrderBy = append(out.OrderBy, OrderItem{Expr: e, Desc: o.Direction == sqlparser.DescScr})
	}
	if s.Limit != nil {
		if s.Limit.Rowcount != nil {
			if out.Limit, err = c.expr(s.Limit.Rowcount); err != nil {
				return nil, err
			}
		}
		if s.Limit.Offset != nil {
			if out.Offset, err = c.expr(s.Limit.Offset); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (c *converter) from(out *Select, from sqlparser.TableExprs) error {
	if len(from) == 1 {
		if t, ok := from[0].(*sqlparser.AliasedTableExpr); ok {
			if name, ok := t.Expr.(sqlparser.TableName); ok {
				if err := checkTableExpr(t); err != nil {
					return err
				}
				path := c.tablePath(name)
				if path.Database == "" && strings.EqualFold(path.Table, "dual") {
					// The parser reads SELECT without FROM as FROM dual.
					return nil
				}
				out.From, out.Table, out.Alias = true, path, t.As.String()
				return nil
			}
		}
	}
	var tree FromItem
	for _, te := range from {
		item, err := c.fromItem(te)
		if err != nil {
			return err
		}
		if tree == nil {
			tree = item
			continue
		}
		tree = &FromJoin{Kind: JoinCross, L: tree, R: item, Comma: true}
	}
	out.From, out.FromTree = true, tree
	return nil
}

func checkTableExpr(t *sqlparser.AliasedTableExpr) error {
	if len(t.Partitions) > 0 {
		return unsupported("PARTITION selection in FROM")
	}
	if t.Hints != nil {
		return unsupported("index hints")
	}
	return nil
}

// fromItem converts one relation of FROM: a table, a derived table, a
// join or a parenthesised list.
func (c *converter) fromItem(te sqlparser.TableExpr) (FromItem, error) {
	switch t := te.(type) {
	case *sqlparser.AliasedTableExpr:
		if err := checkTableExpr(t); err != nil {
			return nil, err
		}
		switch x := t.Expr.(type) {
		case sqlparser.TableName:
			path := c.tablePath(x)
			if path.Database == "" && strings.EqualFold(path.Table, "dual") {
				return nil, unsupported("dual in a join")
			}
			return &FromTable{Table: path, Alias: t.As.String()}, nil
		case *sqlparser.Subquery:
			if t.As.IsEmpty() {
				return nil, &SyntaxError{Msg: "a derived table needs an alias: FROM (SELECT ...) AS name"}
			}
			q, err := c.setOperand(x.Select)
			if err != nil {
				return nil, err
			}
			if cmp, ok := q.(*Compound); ok {
				return &FromSelect{Compound: cmp, Alias: t.As.String()}, nil
			}
			return &FromSelect{Select: q.(*Select), Alias: t.As.String()}, nil
		}
		return nil, unsupported("%s in FROM", sqlparser.String(t.Expr))
	case *sqlparser.ParenTableExpr:
		var tree FromItem
		for _, inner := range t.Exprs {
			item, err := c.fromItem(inner)
			if err != nil {
				return nil, err
			}
			if tree == nil {
				tree = item
				continue
			}
			tree = &FromJoin{Kind: JoinCross, L: tree, R: item, Comma: true}
		}
		if tree == nil {
			return nil, &SyntaxError{Msg: "empty parentheses in FROM"}
		}
		return tree, nil
	case *sqlparser.JoinTableExpr:
		l, err := c.fromItem(t.LeftExpr)
		if err != nil {
			return nil, err
		}
		r, err := c.fromItem(t.RightExpr)
		if err != nil {
			return nil, err
		}
		j := &FromJoin{L: l, R: r}
		switch t.Join {
		case sqlparser.JoinStr, sqlparser.StraightJoinStr:
			j.Kind = JoinInner
			if t.Condition.On == nil && t.Condition.Using == nil {
				j.Kind = JoinCross
			}
		case sqlparser.LeftJoinStr:
			j.Kind = JoinLeft
		case sqlparser.RightJoinStr:
			j.Kind = JoinRight
		case sqlparser.NaturalJoinStr:
			j.Kind, j.Natural = JoinInner, true
		case sqlparser.NaturalLeftJoinStr:
			j.Kind, j.Natural = JoinLeft, true
		case sqlparser.NaturalRightJoinStr:
			j.Kind, j.Natural = JoinRight, true
		default:
			return nil, unsupported("%s", strings.ToUpper(t.Join))
		}
		if t.Condition.On != nil {
			if j.On, err = c.expr(t.Condition.On); err != nil {
				return nil, err
			}
		}
		for _, col := range t.Condition.Using {
			j.Using = append(j.Using, col.String())
		}
		if (j.Kind == JoinLeft || j.Kind == JoinRight) && !j.Natural && j.On == nil && j.Using == nil {
			return nil, &SyntaxError{Msg: j.Kind.String() + " needs an ON or USING condition"}
		}
		return j, nil
	}
	return nil, unsupported("%s in FROM", sqlparser.String(te))
}

// hints reads SELECT /*+ OPTIONS('k'='v', ...) */ comments; other comments
// are ignored.
func (c *converter) hints(comments sqlparser.Comments) (map[string]string, error) {
	var out map[string]string
	for _, raw := range comments {
		text := string(raw)
		if !strings.HasPrefix(text, "/*+") || !strings.HasSuffix(text, "*/") {
			continue
		}
		// Find the comment in the source so errors point into it.
		at := strings.Index(c.src, text)
		if at < 0 {
			at = 0
		}
		pos := c.posMap[at]
		body := text[3 : len(text)-2]
		toks, err := lexAll(body, false)
		if err != nil {
			return nil, shiftErr(err, pos+3)
		}
		p := &parser{src: body, toks: toks}
		for p.peek().kind != tokEOF {
			t := p.peek()
			if !p.acceptKeyword("OPTIONS") {
				if t.kind == tokIdent {
					return nil, &PosError{Pos: pos + 3 + t.pos, Err: unsupported("hint %s", t.text)}
				}
				return nil, shiftErr(p.expected("OPTIONS"), pos+3)
			}
			opts, err := p.options()
			if err != nil {
				return nil, shiftErr(err, pos+3)
			}
			if out == nil {
				out = map[string]string{}
			}
			for k, v := range opts {
				if _, dup := out[k]; dup {
					return nil, shiftErr(p.errAt(t, "hint option "+quoteString(k)+" is given twice"), pos+3)
				}
				out[k] = v
			}
			p.acceptPunct(",")
		}
	}
	return out, nil
}

func (c *converter) insert(ins *sqlparser.Insert) (*Insert, error) {
	switch {
	case ins.Action != sqlparser.InsertStr:
		return nil, unsupported("REPLACE")
	case ins.Ignore != "":
		return nil, unsupported("INSERT IGNORE")
	case len(ins.Partitions) > 0:
		return nil, unsupported("INSERT ... PARTITION")
	}
	out := &Insert{Table: c.tablePath(ins.Table)}
	for _, col := range ins.Columns {
		out.Columns = append(out.Columns, col.String())
	}
	if len(ins.OnDup) > 0 {
		od, err := c.onDuplicate(ins.OnDup, out.Table)
		if err != nil {
			return nil, err
		}
		out.OnDup = od
	}
	switch rows := ins.Rows.(type) {
	case sqlparser.Values:
		for _, tuple := range rows {
			row := make([]Expr, len(tuple))
			for i, v := range tuple {
				if d, ok := v.(*sqlparser.Default); ok && d.ColName == "" {
					row[i] = &Default{}
					continue
				}
				e, err := c.expr(v)
				if err != nil {
					return nil, err
				}
				row[i] = e
			}
			out.Rows = append(out.Rows, row)
		}
	case *sqlparser.Select, *sqlparser.Union:
		q, err := c.setOperand(rows.(sqlparser.SelectStatement))
		if err != nil {
			return nil, err
		}
		switch q := q.(type) {
		case *Select:
			out.Select = q
		case *Compound:
			if out.OnDup != nil {
				return nil, unsupported("ON DUPLICATE KEY UPDATE after a set operation")
			}
			out.Compound = q
		}
	default:
		return nil, unsupported("this INSERT source")
	}
	return out, nil
}

// onDuplicate converts ON DUPLICATE KEY UPDATE, taking only the forms
// an upsert expresses: col = VALUES(col) and col = col.
func (c *converter) onDuplicate(exprs sqlparser.OnDup, table metadata.TablePath) (*OnDuplicate, error) {
	out := &OnDuplicate{}
	seen := map[string]bool{}
	for _, ue := range exprs {
		name := ue.Name.Name.String()
		if q := ue.Name.Qualifier; !q.IsEmpty() && !targetMatches(q, table, "") {
			return nil, errorf(metadata.ErrNotFound, "table %s of column %s is not the table inserted into", sqlparser.String(q), sqlparser.String(ue.Name))
		}
		if seen[strings.ToLower(name)] {
			return nil, errorf(metadata.ErrInvalidValue, "column %s is assigned twice in ON DUPLICATE KEY UPDATE", quoteIdent(name))
		}
		seen[strings.ToLower(name)] = true
		switch x := ue.Expr.(type) {
		case *sqlparser.ValuesFuncExpr:
			if x.Name != nil && x.Name.Name.EqualString(name) {
				out.Update = append(out.Update, name)
				continue
			}
		case *sqlparser.ColName:
			if x.Name.EqualString(name) && (x.Qualifier.IsEmpty() || targetMatches(x.Qualifier, table, "")) {
				out.Keep = append(out.Keep, name)
				continue
			}
		case *sqlparser.SQLVal, *sqlparser.NullVal, sqlparser.BoolVal, *sqlparser.UnaryExpr:
			e, err := c.expr(x)
			if err != nil {
				return nil, err
			}
			switch e.(type) {
			case *Literal, *Param, *Neg:
				out.Set = append(out.Set, Assignment{Column: name, Expr: e})
				continue
			}
		}
		return nil, errorf(metadata.ErrUnsupported, "ON DUPLICATE KEY UPDATE %s is not supported: only col = VALUES(col) (take the inserted value), col = col (keep the stored one) and col = a constant, as a primary-key table upserts", sqlparser.String(ue))
	}
	return out, nil
}

var cmpOps = map[string]CmpOp{
	sqlparser.EqualStr: OpEq, sqlparser.NotEqualStr: OpNotEq, sqlparser.LessThanStr: OpLt,
	sqlparser.LessEqualStr: OpLtEq, sqlparser.GreaterThanStr: OpGt, sqlparser.GreaterEqualStr: OpGtEq,
	sqlparser.NullSafeEqualStr: OpNullSafeEq,
}

func (c *converter) exprs(in []sqlparser.Expr) ([]Expr, error) {
	out := make([]Expr, len(in))
	for i, x := range in {
		e, err := c.expr(x)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func (c *converter) expr(e sqlparser.Expr) (Expr, error) {
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		return c.expr(x.Expr)
	case *sqlparser.AndExpr:
		l, r, err := c.pair(x.Left, x.Right)
		return &And{L: l, R: r}, err
	case *sqlparser.OrExpr:
		l, r, err := c.pair(x.Left, x.Right)
		return &Or{L: l, R: r}, err
	case *sqlparser.NotExpr:
		in, err := c.expr(x.Expr)
		return &Not{E: in}, err
	case *sqlparser.ComparisonExpr:
		return c.comparison(x)
	case *sqlparser.RangeCond:
		l, err := c.expr(x.Left)
		if err != nil {
			return nil, err
		}
		lo, hi, err := c.pair(x.From, x.To)
		return &Between{E: l, Lo: lo, Hi: hi, Not: x.Operator == sqlparser.NotBetweenStr}, err
	case *sqlparser.IsExpr:
		in, err := c.expr(x.Expr)
		if err != nil {
			return nil, err
		}
		switch x.Operator {
		case sqlparser.IsNullStr:
			return &IsNull{E: in}, nil
		case sqlparser.IsNotNullStr:
			return &IsNull{E: in, Not: true}, nil
		}
		return nil, unsupported("%s", strings.ToUpper(x.Operator))
	case *sqlparser.SQLVal:
		return c.value(x, false)
	case *sqlparser.NullVal:
		return &Literal{}, nil
	case sqlparser.BoolVal:
		return &Literal{Value: bool(x), T: metadata.BooleanType()}, nil
	case *sqlparser.ColName:
		if !x.Qualifier.Qualifier.IsEmpty() {
			// db.t.col: keep the table qualifier; binding checks it.
			return &ColumnRef{Name: x.Name.String(), Index: -1,
				Qualifier: x.Qualifier.Qualifier.String() + "." + x.Qualifier.Name.String()}, nil
		}
		return &ColumnRef{Name: x.Name.String(), Index: -1, Qualifier: x.Qualifier.Name.String()}, nil
	case *sqlparser.BinaryExpr:
		op, ok := arithOps[x.Operator]
		if !ok {
			return nil, unsupported("operator %s", x.Operator)
		}
		l, r, err := c.pair(x.Left, x.Right)
		return &Arith{Op: op, L: l, R: r}, err
	case *sqlparser.UnaryExpr:
		switch x.Operator {
		case sqlparser.UMinusStr:
			if v, ok := x.Expr.(*sqlparser.SQLVal); ok && (v.Type == sqlparser.IntVal || v.Type == sqlparser.FloatVal) {
				return c.value(v, true)
			}
			in, err := c.expr(x.Expr)
			return &Neg{E: in}, err
		case sqlparser.UPlusStr:
			return c.expr(x.Expr)
		case sqlparser.BangStr:
			in, err := c.expr(x.Expr)
			return &Not{E: in}, err
		}
		return nil, unsupported("operator %s", strings.TrimSpace(x.Operator))
	case *sqlparser.FuncExpr:
		return c.funcCall(x)
	case *sqlparser.CaseExpr:
		out := &Case{}
		var err error
		if x.Expr != nil {
			if out.Operand, err = c.expr(x.Expr); err != nil {
				return nil, err
			}
		}
		for _, w := range x.Whens {
			cond, res, err := c.pair(w.Cond, w.Val)
			if err != nil {
				return nil, err
			}
			out.Whens = append(out.Whens, When{Cond: cond, Result: res})
		}
		if x.Else != nil {
			if out.Else, err = c.expr(x.Else); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *sqlparser.ConvertExpr:
		in, err := c.expr(x.Expr)
		if err != nil {
			return nil, err
		}
		t, err := convertType(x.Type)
		if err != nil {
			return nil, err
		}
		return &Cast{E: in, T: t}, nil
	case *sqlparser.SubstrExpr:
		args := []Expr{&ColumnRef{Name: x.Name.Name.String(), Index: -1, Qualifier: x.Name.Qualifier.Name.String()}}
		for _, a := range []sqlparser.Expr{x.From, x.To} {
			if a == nil {
				continue
			}
			e, err := c.expr(a)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		return &Func{Name: "substring", Args: args}, nil
	case sqlparser.ValTuple:
		return nil, unsupported("a row value %s", sqlparser.String(x))
	case *sqlparser.Subquery:
		return c.subquery(SubScalar, x)
	case *sqlparser.ExistsExpr:
		return c.subquery(SubExists, x.Subquery)
	case *sqlparser.Default:
		return nil, unsupported("DEFAULT")
	case *sqlparser.IntervalExpr:
		return nil, unsupported("INTERVAL")
	}
	return nil, unsupported("expression %s", sqlparser.String(e))
}

var arithOps = map[string]byte{
	sqlparser.PlusStr: '+', sqlparser.MinusStr: '-', sqlparser.MultStr: '*',
	sqlparser.DivStr: '/', sqlparser.IntDivStr: 'd', sqlparser.ModStr: '%',
}

func (c *converter) pair(a, b sqlparser.Expr) (Expr, Expr, error) {
	l, err := c.expr(a)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.expr(b)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func (c *converter) comparison(x *sqlparser.ComparisonExpr) (Expr, error) {
	l, err := c.expr(x.Left)
	if err != nil {
		return nil, err
	}
	switch x.Operator {
	case sqlparser.InStr, sqlparser.NotInStr:
		tuple, ok := x.Right.(sqlparser.ValTuple)
		if !ok {
			if sub, ok := x.Right.(*sqlparser.Subquery); ok {
				return c.inSubquery(l, sub, x.Operator == sqlparser.NotInStr)
			}
			return nil, unsupported("IN %s", sqlparser.String(x.Right))
		}
		list, err := c.exprs(tuple)
		if err != nil {
			return nil, err
		}
		return &In{E: l, List: list, Not: x.Operator == sqlparser.NotInStr}, nil
	case sqlparser.LikeStr, sqlparser.NotLikeStr:
		r, err := c.expr(x.Right)
		if err != nil {
			return nil, err
		}
		like := &Like{E: l, Pattern: r, Not: x.Operator == sqlparser.NotLikeStr}
		if x.Escape != nil {
			v, ok := x.Escape.(*sqlparser.SQLVal)
			if !ok || v.Type != sqlparser.StrVal || len([]rune(string(v.Val))) != 1 {
				return nil, errorf(metadata.ErrSyntax, "ESCAPE takes one character in quotes, not %s", sqlparser.String(x.Escape))
			}
			like.Escape = []rune(string(v.Val))[0]
		}
		return like, nil
	}
	op, ok := cmpOps[x.Operator]
	if !ok {
		return nil, unsupported("operator %s", strings.ToUpper(x.Operator))
	}
	if q, ok := quantified(x.Right); ok {
		return c.quantifiedSubquery(l, op, q)
	}
	r, err := c.expr(x.Right)
	if err != nil {
		return nil, err
	}
	return &Compare{Op: op, L: l, R: r}, nil
}

func (c *converter) funcCall(f *sqlparser.FuncExpr) (Expr, error) {
	if !f.Qualifier.IsEmpty() {
		return nil, unsupported("function %s.%s", f.Qualifier.String(), f.Name.String())
	}
	if name := f.Name.String(); name == anyCall || name == allCall {
		// The quantifier rewrite made this call of ANY, SOME or ALL; one
		// that reached here has no subquery as its argument.
		return nil, errorf(metadata.ErrSyntax, "%s takes a subquery, as in x = %s (SELECT ...)", strings.ToUpper(strings.TrimSuffix(name, " subquery")), strings.ToUpper(strings.TrimSuffix(name, " subquery")))
	}
	out := &Func{Name: f.Name.Lowered(), Distinct: f.Distinct}
	for _, se := range f.Exprs {
		switch a := se.(type) {
		case *sqlparser.StarExpr:
			if out.Name != "count" || len(f.Exprs) != 1 || f.Distinct {
				return nil, unsupported("* as an argument of %s", strings.ToUpper(out.Name))
			}
			out.Star = true
		case *sqlparser.AliasedExpr:
			e, err := c.expr(a.Expr)
			if err != nil {
				return nil, err
			}
			out.Args = append(out.Args, e)
		default:
			return nil, unsupported("argument %s", sqlparser.String(se))
		}
	}
	return out, nil
}

// value converts a literal or placeholder; neg folds a unary minus into a
// numeric literal so that -128 is one TINYINT-sized constant.
func (c *converter) value(v *sqlparser.SQLVal, neg bool) (Expr, error) {
	text := string(v.Val)
	switch v.Type {
	case sqlparser.StrVal:
		return &Literal{Value: text, T: metadata.StringType()}, nil
	case sqlparser.IntVal, sqlparser.FloatVal:
		if neg {
			text = "-" + text
		}
		return numberLiteral(text)
	case sqlparser.HexVal, sqlparser.HexNum:
		h := strings.TrimPrefix(strings.TrimPrefix(text, "0x"), "0X")
		if len(h)%2 == 1 {
			h = "0" + h
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, errorf(metadata.ErrSyntax, "bad hexadecimal literal %s", text)
		}
		return &Literal{Value: b, T: metadata.BytesType()}, nil
	case sqlparser.ValArg:
		name := strings.TrimPrefix(text, ":")
		if c.style == '?' || c.style == '$' {
			if n, ok := strings.CutPrefix(name, "v"); ok {
				if ord, err := strconv.Atoi(n); err == nil && ord > 0 {
					return &Param{Ordinal: ord}, nil
				}
			}
		}
		return &Param{Name: name}, nil
	}
	return nil, unsupported("literal %s", sqlparser.String(v))
}

// numberLiteral types a numeric literal exactly: an integer is BIGINT when
// it fits, else DECIMAL(n, 0); a literal with a decimal point is
// DECIMAL(p, s) with the digits as written; one with an exponent is DOUBLE.
func numberLiteral(text string) (*Literal, error) {
	if strings.ContainsAny(text, "eE") {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, errorf(metadata.ErrInvalidValue, "numeric literal %s is out of the range of DOUBLE", text)
		}
		return &Literal{Value: f, T: metadata.DoubleType()}, nil
	}
	if !strings.Contains(text, ".") {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return &Literal{Value: n, T: metadata.BigIntType()}, nil
		}
	}
	digits := strings.TrimPrefix(text, "-")
	intPart, frac, _ := strings.Cut(digits, ".")
	intPart = strings.TrimLeft(intPart, "0")
	p, s := len(intPart)+len(frac), len(frac)
	if p == 0 {
		p = 1
	}
	if p > metadata.MaxDecimalPrecision {
		return nil, errorf(metadata.ErrInvalidValue, "numeric literal %s has more than %d digits", text, metadata.MaxDecimalPrecision)
	}
	d, err := metadata.ParseDecimal(text, p, s)
	if err != nil {
		return nil, err
	}
	return &Literal{Value: d, T: metadata.DecimalType(p, s)}, nil
}

// convertType maps the target of CAST/CONVERT as the MySQL dialect names
// it to our types.
func convertType(t *sqlparser.ConvertType) (metadata.DataType, error) {
	num := func(v *sqlparser.SQLVal, def int) (int, error) {
		if v == nil {
			return def, nil
		}
		n, err := strconv.Atoi(string(v.Val))
		if err != nil || n > 1<<20 {
			return 0, errorf(metadata.ErrInvalidType, "bad length %s in CAST", v.Val)
		}
		return n, nil
	}
	var out metadata.DataType
	switch strings.ToLower(t.Type) {
	case "binary":
		if t.Length == nil {
			out = metadata.BytesType()
		} else {
			n, err := num(t.Length, 1)
			if err != nil {
				return out, err
			}
			out = metadata.BinaryType(n)
		}
	case "char", "nchar":
		if t.Length == nil {
			out = metadata.StringType()
		} else {
			n, err := num(t.Length, 1)
			if err != nil {
				return out, err
			}
			out = metadata.CharType(n)
		}
	case "date":
		out = metadata.DateType()
	case "datetime":
		p, err := num(t.Length, 0)
		if err != nil {
			return out, err
		}
		out = metadata.TimestampType(p)
	case "time":
		p, err := num(t.Length, 0)
		if err != nil {
			return out, err
		}
		out = metadata.TimeType(p)
	case "decimal":
		p, err := num(t.Length, metadata.DefaultDecimalPrec)
		if err != nil {
			return out, err
		}
		s, err := num(t.Scale, 0)
		if err != nil {
			return out, err
		}
		out = metadata.DecimalType(p, s)
	case "signed", "signed integer", "unsigned", "unsigned integer":
		// UNSIGNED has no type of its own here: BIGINT holds what it reads.
		out = metadata.BigIntType()
	default:
		return out, unsupported("CAST to %s", strings.ToUpper(t.Type))
	}
	if err := out.Validate(); err != nil {
		return out, err
	}
	return out, nil
}

// isQueryKeyword reports whether the query grammar reads name as a
// keyword (ORDER, GROUP, KEY, ...): such a name must be quoted in the
// statements fluss writes out, or they would not parse back.
func isQueryKeyword(name string) bool {
	typ, _ := sqlparser.NewStringTokenizer(name).Scan()
	return typ != sqlparser.ID
}

// setOperand converts a query the parser read in parentheses (a derived
// table, a subquery): a SELECT, or its UNION of SELECTs, or the set
// operation parseDML read in its place.
func (c *converter) setOperand(st sqlparser.SelectStatement) (SetOperand, error) {
	switch x := st.(type) {
	case *sqlparser.Select:
		if op, ok := c.nestedOperand(x); ok {
			return op, nil
		}
		return c.selectStmt(x)
	case *sqlparser.ParenSelect:
		return c.setOperand(x.Select)
	case *sqlparser.Union:
		if x.Lock != "" {
			return nil, unsupported("a locking clause (FOR UPDATE, LOCK IN SHARE MODE) inside a query (only the one ending the statement)")
		}
		out := &Compound{Kind: SetUnion, All: x.Type == sqlparser.UnionAllStr}
		var err error
		if out.Left, err = c.setOperand(x.Left); err != nil {
			return nil, err
		}
		if out.Right, err = c.setOperand(x.Right); err != nil {
			return nil, err
		}
		for _, o := range x.OrderBy {
			e, err := c.expr(o.Expr)
			if err != nil {
				return nil, err
			}
			out.OrderBy = append(out.OrderBy, OrderItem{Expr: e, Desc: o.Direction == sqlparser.DescScr})
		}
		if x.Limit != nil {
			if x.Limit.Rowcount != nil {
				if out.Limit, err = c.expr(x.Limit.Rowcount); err != nil {
					return nil, err
				}
			}
			if x.Limit.Offset != nil {
				if out.Offset, err = c.expr(x.Limit.Offset); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	return nil, unsupported("%T as a query", st)
}
