package sqlplan

import (
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// CreateView is CREATE [OR REPLACE] VIEW [IF NOT EXISTS] [db.]v [(cols)]
// AS query. View.Database is "" when the name is unqualified.
type CreateView struct {
	View        metadata.TablePath
	OrReplace   bool
	IfNotExists bool
	// Columns name the view's columns; nil keeps the query's output names.
	Columns []string
	// Select is the query, or Compound when it is a set operation.
	Select   *Select
	Compound *Compound
	// Query is the query's text as written, which the catalog stores and
	// binding parses again at each use.
	Query string
}

// DropView is DROP VIEW [IF EXISTS] [db.]v, ... . Without IF EXISTS
// the statement drops nothing when one of the views does not exist, as
// MySQL's; with it the missing ones are skipped.
type DropView struct {
	Views    []metadata.TablePath
	IfExists bool
}

// CreateTableAs is CREATE TABLE [IF NOT EXISTS] t [(PRIMARY KEY (k)
// NOT ENFORCED)] [COMMENT '...'] [PARTITIONED BY (...)] [WITH (...)] AS
// query: a table whose columns are the query's output, filled with its
// rows. Table has no columns yet (query takes them from the bound
// query); its Schema.PrimaryKey, PartitionKeys, Options and Comment are
// the statement's.
type CreateTableAs struct {
	Table       metadata.TableDescriptor
	IfNotExists bool
	Select      *Select
}

func (*CreateView) isStatement()    {}
func (*DropView) isStatement()      {}
func (*CreateTableAs) isStatement() {}

func (*CreateView) NumInput() int      { return 0 }
func (*DropView) NumInput() int        { return 0 }
func (s *CreateTableAs) NumInput() int { return s.Select.NumInput() }

func (s *CreateView) String() string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if s.OrReplace {
		b.WriteString("OR REPLACE ")
	}
	b.WriteString("VIEW ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(quotePath(s.View))
	if len(s.Columns) > 0 {
		b.WriteString(" (" + quoteIdents(s.Columns) + ")")
	}
	if s.Compound != nil {
		b.WriteString(" AS " + s.Compound.String())
	} else {
		b.WriteString(" AS " + s.Select.String())
	}
	return b.String()
}

func (s *DropView) String() string {
	names := make([]string, len(s.Views))
	for i, v := range s.Views {
		names[i] = quotePath(v)
	}
	if s.IfExists {
		return "DROP VIEW IF EXISTS " + strings.Join(names, ", ")
	}
	return "DROP VIEW " + strings.Join(names, ", ")
}

func (s *CreateTableAs) String() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	d := &s.Table
	b.WriteString(quotePath(d.Path))
	if len(d.Schema.PrimaryKey) > 0 {
		b.WriteString(" (PRIMARY KEY (" + quoteIdents(d.Schema.PrimaryKey) + ") NOT ENFORCED)")
	}
	if d.Comment != "" {
		b.WriteString(" COMMENT " + quoteString(d.Comment))
	}
	if len(d.PartitionKeys) > 0 {
		b.WriteString(" PARTITIONED BY (" + quoteIdents(d.PartitionKeys) + ")")
	}
	if len(d.Options) > 0 {
		b.WriteString(" WITH " + formatOptions(d.Options))
	}
	b.WriteString(" AS " + s.Select.String())
	return b.String()
}

// createView parses the rest of CREATE [OR REPLACE] VIEW; p is after VIEW.
// The lexer read everything after VIEW by the query grammar's rules.
func (p *parser) createView(orReplace bool) (Statement, error) {
	s := &CreateView{OrReplace: orReplace, IfNotExists: p.acceptKeyword("IF", "NOT", "EXISTS")}
	if s.OrReplace && s.IfNotExists {
		return nil, p.errAt(p.toks[p.i-1], "OR REPLACE and IF NOT EXISTS cannot both be given")
	}
	var err error
	if s.View, err = p.tablePath(); err != nil {
		return nil, err
	}
	if p.peek().kind == tokPunct && p.peek().text == "(" {
		if s.Columns, _, err = p.identList("view column"); err != nil {
			return nil, err
		}
	}
	q, text, err := p.asQuery("view")
	if err != nil {
		return nil, err
	}
	switch q := q.(type) {
	case *Select:
		s.Select = q
	case *Compound:
		s.Compound = q
	}
	s.Query = text
	for _, t := range p.toks {
		if t.kind == tokParam {
			return nil, &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported,
				"a view's query cannot have placeholders: it is stored and run without arguments")}
		}
	}
	return s, nil
}

// asQuery reads AS and the query that ends the statement, returning it
// and its text as written (without a trailing ';'). what names the
// statement in errors.
func (p *parser) asQuery(what string) (SetOperand, string, error) {
	if err := p.expectKeyword("AS"); err != nil {
		return nil, "", err
	}
	first := p.peek()
	if !p.isKeyword(first, "SELECT") && !p.isKeyword(first, "WITH") && !(first.kind == tokPunct && first.text == "(") {
		return nil, "", p.expected("the query of the " + what + " (SELECT or WITH)")
	}
	rest := p.toks[p.i:]
	st, err := parseQueryTokens(p.src, first.pos, rest, &paramStyle{})
	if err != nil {
		return nil, "", err
	}
	q, ok := st.(SetOperand)
	if !ok {
		return nil, "", &PosError{Pos: first.pos, Err: unsupported("%T as the query of a %s", st, what)}
	}
	end := rest[len(rest)-1].pos
	if n := len(rest); n >= 2 && rest[n-2].kind == tokPunct && rest[n-2].text == ";" {
		end = rest[n-2].pos
	}
	p.i = len(p.toks) - 1 // the query took the rest of the statement
	return q, strings.TrimSpace(p.src[first.pos:end]), nil
}

func (p *parser) dropView() (Statement, error) {
	s := &DropView{IfExists: p.acceptKeyword("IF", "EXISTS")}
	err := p.commaList(func() error {
		path, err := p.tablePath()
		s.Views = append(s.Views, path)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// isCreateTableAs reports whether the CREATE TABLE at p (after TABLE) is
// CREATE TABLE ... AS query: an AS outside parentheses, where the lexer
// switched to the query grammar too.
func (p *parser) isCreateTableAs() bool {
	depth := 0
	for _, t := range p.toks[p.i:] {
		switch {
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			depth--
		case depth == 0 && p.isKeyword(t, "AS"):
			return true
		}
	}
	return false
}

// createTableAs parses CREATE TABLE ... AS query after TABLE. The table
// takes its columns from the query, so the parentheses may hold only the
// primary key, as Flink's CREATE TABLE AS allows.
func (p *parser) createTableAs() (Statement, error) {
	s := &CreateTableAs{IfNotExists: p.acceptKeyword("IF", "NOT", "EXISTS")}
	d := &s.Table
	var err error
	if d.Path, err = p.tablePath(); err != nil {
		return nil, err
	}
	if p.acceptPunct("(") {
		t := p.peek()
		if !p.acceptKeyword("PRIMARY", "KEY") {
			return nil, &PosError{Pos: t.pos, Err: unsupported(
				"column definitions in CREATE TABLE ... AS (the query's columns are the table's; only a PRIMARY KEY may be declared)")}
		}
		if d.Schema.PrimaryKey, _, err = p.identList("primary key column"); err != nil {
			return nil, err
		}
		p.notEnforced()
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for {
		t := p.peek()
		var clause string
		switch {
		case p.acceptKeyword("COMMENT"):
			clause = "COMMENT"
			d.Comment, err = p.stringLit("table comment")
		case p.acceptKeyword("PARTITIONED", "BY"):
			clause = "PARTITIONED BY"
			d.PartitionKeys, _, err = p.identList("partition key")
		case p.acceptKeyword("WITH"):
			clause = "WITH"
			d.Options, err = p.options()
		}
		if clause == "" {
			break
		}
		if err != nil {
			return nil, err
		}
		if seen[clause] {
			return nil, p.errAt(t, clause+" is given twice")
		}
		seen[clause] = true
	}
	query := p.peekAt(1) // after AS
	q, _, err := p.asQuery("table")
	if err != nil {
		return nil, err
	}
	if s.Select, _ = q.(*Select); s.Select == nil {
		return nil, &PosError{Pos: query.pos, Err: unsupported("a set operation as the query of CREATE TABLE ... AS")}
	}
	// The key and partition names are checked against the query's
	// columns when it is bound.
	return s, nil
}
