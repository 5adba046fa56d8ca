package sqlplan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// parser is the recursive-descent parser of our own grammar: DDL, SHOW,
// DESCRIBE, USE and CALL (DESIGN §6). It reads a token slice that always
// ends with a tokEOF token.
type parser struct {
	src    string
	toks   []token
	i      int
	params paramStyle
}

// keywords are words that name statements or clauses of our grammar. They
// stay usable as plain identifiers where the grammar is unambiguous, but
// the canonical String forms backquote them.
var keywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`ADD ALTER ARRAY BY CALL CASCADE COLUMN COMMENT CONSTRAINT
		CREATE DATABASE DATABASES DESC DESCRIBE DROP ENFORCED EXISTS EXPLAIN FROM IF IN INSERT
		KEY MAP NOT NULL PARTITION PARTITIONED PARTITIONS PRIMARY RESTRICT ROW SELECT SET SHOW
		TABLE TABLES USE WITH FALSE TRUE`) {
		keywords[w] = true
	}
}

// quoteIdent renders a name so that Parse reads it back: plain when it is
// a plain identifier that is no keyword, else backquoted.
func quoteIdent(name string) string {
	if keywords[strings.ToUpper(name)] || isQueryKeyword(name) {
		// isQueryKeyword also holds for a name the query grammar cannot
		// read as a bare identifier, such as one that starts with a
		// backquote: its backquotes must be doubled like any other.
		return metadata.Backquote(name)
	}
	return metadata.QuoteIdent(name)
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// errAt reports a syntax error at token t.
func (p *parser) errAt(t token, msg string) error {
	return &SyntaxError{Pos: t.pos, Near: p.src[t.pos:t.end], Msg: msg}
}

// expected reports that the current token is not what the grammar needs.
func (p *parser) expected(what string) error { return p.errAt(p.peek(), "expected "+what) }

func (p *parser) isKeyword(t token, kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

// acceptKeyword consumes the keyword sequence kws if the next tokens are
// exactly those words.
func (p *parser) acceptKeyword(kws ...string) bool {
	for n, kw := range kws {
		if !p.isKeyword(p.peekAt(n), kw) {
			return false
		}
	}
	p.i += len(kws)
	return true
}

func (p *parser) expectKeyword(kws ...string) error {
	for _, kw := range kws {
		if !p.acceptKeyword(kw) {
			return p.expected(kw)
		}
	}
	return nil
}

func (p *parser) acceptPunct(s string) bool {
	if t := p.peek(); t.kind == tokPunct && t.text == s {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectPunct(s string) error {
	if !p.acceptPunct(s) {
		return p.expected("'" + s + "'")
	}
	return nil
}

// ident reads a plain or backquoted identifier; what names it in errors.
func (p *parser) ident(what string) (string, error) {
	t := p.peek()
	switch t.kind {
	case tokIdent:
		p.i++
		return t.text, nil
	case tokQuotedIdent:
		if t.text == "" {
			return "", p.errAt(t, "empty "+what)
		}
		p.i++
		return t.text, nil
	}
	return "", p.expected(what)
}

// commaList reads item, ... : item reads one, and the list goes on while
// a ',' follows it.
func (p *parser) commaList(item func() error) error {
	for {
		if err := item(); err != nil {
			return err
		}
		if !p.acceptPunct(",") {
			return nil
		}
	}
}

// identList reads '(' ident, ... ')'.
func (p *parser) identList(what string) ([]string, []token, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, nil, err
	}
	var names []string
	var toks []token
	err := p.commaList(func() error {
		toks = append(toks, p.peek())
		n, err := p.ident(what)
		if err != nil {
			return err
		}
		for _, prev := range names {
			if strings.EqualFold(prev, n) {
				return p.errAt(toks[len(toks)-1], what+" "+quoteIdent(n)+" is listed twice")
			}
		}
		names = append(names, n)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, nil, err
	}
	return names, toks, nil
}

func (p *parser) stringLit(what string) (string, error) {
	t := p.peek()
	if t.kind != tokString {
		return "", p.expected(what + " (a quoted string)")
	}
	p.i++
	return t.text, nil
}

// valueText reads an option or partition value: a string, or a number or
// TRUE/FALSE written without quotes, as text.
func (p *parser) valueText(what string) (string, error) {
	t := p.peek()
	switch {
	case t.kind == tokString, t.kind == tokNumber:
		p.i++
		return t.text, nil
	case t.kind == tokPunct && t.text == "-" && p.peekAt(1).kind == tokNumber:
		p.i += 2
		return "-" + p.toks[p.i-1].text, nil
	case p.isKeyword(t, "TRUE"), p.isKeyword(t, "FALSE"):
		p.i++
		return strings.ToLower(t.text), nil
	}
	return "", p.expected(what)
}

// tablePath reads [db.]table.
func (p *parser) tablePath() (metadata.TablePath, error) {
	first, err := p.ident("table name")
	if err != nil {
		return metadata.TablePath{}, err
	}
	if !p.acceptPunct(".") {
		return metadata.TablePath{Table: first}, nil
	}
	second, err := p.ident("table name")
	if err != nil {
		return metadata.TablePath{}, err
	}
	return metadata.TablePath{Database: first, Table: second}, nil
}

// options reads '(' 'k' = 'v', ... ')'.
func (p *parser) options() (map[string]string, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	opts := map[string]string{}
	err := p.commaList(func() error {
		kt := p.peek()
		k, err := p.stringLit("option key")
		if err != nil {
			return err
		}
		if _, dup := opts[k]; dup {
			return p.errAt(kt, "option "+quoteString(k)+" is given twice")
		}
		if err := p.expectPunct("="); err != nil {
			return err
		}
		v, err := p.valueText("option value")
		opts[k] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	return opts, nil
}

// partitionSpec reads '(' key = value, ... ')'.
func (p *parser) partitionSpec() ([]PartitionValue, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var spec []PartitionValue
	err := p.commaList(func() error {
		kt := p.peek()
		k, err := p.ident("partition key")
		if err != nil {
			return err
		}
		for _, prev := range spec {
			if strings.EqualFold(prev.Key, k) {
				return p.errAt(kt, "partition key "+quoteIdent(k)+" is given twice")
			}
		}
		if err := p.expectPunct("="); err != nil {
			return err
		}
		v, err := p.valueText("partition value")
		spec = append(spec, PartitionValue{Key: k, Value: v})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	return spec, nil
}

// parseStatement parses one statement of our grammar and the optional
// trailing ';'.
func (p *parser) parseStatement() (Statement, error) {
	t := p.peek()
	var (
		s   Statement
		err error
	)
	switch {
	case p.acceptKeyword("CREATE"):
		s, err = p.create()
	case p.acceptKeyword("DROP"):
		s, err = p.drop()
	case p.acceptKeyword("ALTER"):
		s, err = p.alter()
	case p.acceptKeyword("SHOW"):
		s, err = p.show()
	case p.acceptKeyword("DESCRIBE"), p.acceptKeyword("DESC"):
		var path metadata.TablePath
		path, err = p.tablePath()
		s = &Describe{Table: path}
	case p.acceptKeyword("USE"):
		var db string
		db, err = p.ident("database name")
		s = &Use{Database: db}
	case p.acceptKeyword("CALL"):
		s, err = p.call()
	case p.acceptKeyword("SAVEPOINT"):
		s, err = p.savepoint(SavepointSet)
	case p.acceptKeyword("ROLLBACK"):
		p.acceptKeyword("WORK")
		if err = p.expectKeyword("TO"); err == nil {
			p.acceptKeyword("SAVEPOINT")
			s, err = p.savepoint(SavepointRollbackTo)
		}
	case p.acceptKeyword("RELEASE"):
		if err = p.expectKeyword("SAVEPOINT"); err == nil {
			s, err = p.savepoint(SavepointRelease)
		}
	case p.acceptKeyword("SET"):
		s, err = p.set()
	default:
		return nil, p.errAt(t, "expected a statement")
	}
	if err != nil {
		return nil, err
	}
	if p.acceptPunct(";") && p.peek().kind != tokEOF {
		return nil, p.errAt(p.peek(), "only one statement is allowed")
	}
	if p.peek().kind != tokEOF {
		return nil, p.expected("end of statement")
	}
	return s, nil
}

// savepoint reads the name of a savepoint statement of kind k.
func (p *parser) savepoint(k SavepointKind) (Statement, error) {
	name, err := p.ident("savepoint name")
	if err != nil {
		return nil, err
	}
	return &Savepoint{Kind: k, Name: name}, nil
}

func (p *parser) create() (Statement, error) {
	switch {
	case p.acceptKeyword("DATABASE"):
		ine := p.acceptKeyword("IF", "NOT", "EXISTS")
		name, err := p.ident("database name")
		if err != nil {
			return nil, err
		}
		return &CreateDatabase{Name: name, IfNotExists: ine}, nil
	case p.acceptKeyword("TABLE"):
		if p.isCreateTableAs() {
			return p.createTableAs()
		}
		return p.createTable()
	case p.acceptKeyword("VIEW"):
		return p.createView(false)
	case p.acceptKeyword("OR", "REPLACE", "VIEW"):
		return p.createView(true)
	case p.isKeyword(p.peek(), "INDEX"), p.isKeyword(p.peek(), "UNIQUE"), p.isKeyword(p.peek(), "FULLTEXT"), p.isKeyword(p.peek(), "SPATIAL"):
		return p.createIndex()
	}
	return nil, p.expected("DATABASE, TABLE, VIEW or INDEX")
}

func (p *parser) drop() (Statement, error) {
	switch {
	case p.acceptKeyword("DATABASE"):
		ie := p.acceptKeyword("IF", "EXISTS")
		name, err := p.ident("database name")
		if err != nil {
			return nil, err
		}
		s := &DropDatabase{Name: name, IfExists: ie}
		switch {
		case p.acceptKeyword("CASCADE"):
			s.Cascade = true
		case p.acceptKeyword("RESTRICT"):
		}
		return s, nil
	case p.acceptKeyword("TABLE"):
		ie := p.acceptKeyword("IF", "EXISTS")
		path, err := p.tablePath()
		if err != nil {
			return nil, err
		}
		// MySQL reads and ignores RESTRICT and CASCADE here (GORM's
		// DropTable sends CASCADE): what depends on a table is its
		// children's foreign keys, which foreign_key_checks governs.
		if !p.acceptKeyword("CASCADE") {
			p.acceptKeyword("RESTRICT")
		}
		return &DropTable{Table: path, IfExists: ie}, nil
	case p.acceptKeyword("VIEW"):
		return p.dropView()
	case p.acceptKeyword("INDEX"):
		ie := p.acceptKeyword("IF", "EXISTS")
		name, err := p.ident("index name")
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("ON"); err != nil {
			return nil, err
		}
		path, err := p.tablePath()
		if err != nil {
			return nil, err
		}
		p.indexOptions()
		return &DropIndex{Table: path, Name: name, IfExists: ie}, nil
	}
	return nil, p.expected("DATABASE, TABLE, VIEW or INDEX")
}

// createIndex reads the rest of CREATE [UNIQUE] INDEX [IF NOT EXISTS]
// name [USING type] ON t (col [ASC | DESC], ...) [USING type] [ALGORITHM
// | LOCK [=] value].
func (p *parser) createIndex() (Statement, error) {
	t := p.peek()
	var ix metadata.DeclaredIndex
	switch {
	case p.acceptKeyword("UNIQUE"):
		ix.Unique = true
	case p.isKeyword(t, "FULLTEXT"), p.isKeyword(t, "SPATIAL"):
		return nil, p.noIndexKind(t)
	}
	if err := p.expectKeyword("INDEX"); err != nil {
		return nil, err
	}
	ine := p.acceptKeyword("IF", "NOT", "EXISTS")
	var err error
	if ix.Name, err = p.ident("index name"); err != nil {
		return nil, err
	}
	p.indexType()
	if err := p.expectKeyword("ON"); err != nil {
		return nil, err
	}
	path, err := p.tablePath()
	if err != nil {
		return nil, err
	}
	if ix.Columns, err = p.indexColumns(); err != nil {
		return nil, err
	}
	p.indexType()
	p.indexOptions()
	return &CreateIndex{Table: path, Index: ix, IfNotExists: ine}, nil
}

// noIndexKind refuses FULLTEXT and SPATIAL indexes, which fluss does not
// build.
func (p *parser) noIndexKind(t token) error {
	return &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported,
		"%s indexes are not supported: fluss builds UNIQUE and plain (INDEX, KEY) indexes", strings.ToUpper(t.text))}
}

// indexOptions skips MySQL's ALGORITHM and LOCK clauses of an index
// statement, which choose how the index is built online: fluss builds it
// in one step, with writes to the table held meanwhile.
func (p *parser) indexOptions() {
	for p.isKeyword(p.peek(), "ALGORITHM") || p.isKeyword(p.peek(), "LOCK") {
		p.i++
		p.acceptPunct("=")
		if p.peek().kind == tokIdent {
			p.i++
		}
	}
}

// indexColumns reads an index's (col [ASC | DESC], ...). The order is the
// index's either way: a key is read in both directions. A prefix length
// (col(10)) or an expression is refused: the index would hold more, or
// other, than the column.
func (p *parser) indexColumns() ([]string, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var names []string
	err := p.commaList(func() error {
		t := p.peek()
		n, err := p.ident("index column")
		if err != nil {
			return err
		}
		if p.peek().kind == tokPunct && p.peek().text == "(" {
			return &PosError{Pos: p.peek().pos, Err: errorf(metadata.ErrUnsupported,
				"index column %s: a prefix length is not supported; an index holds whole values", quoteIdent(n))}
		}
		for _, prev := range names {
			if strings.EqualFold(prev, n) {
				return p.errAt(t, "index column "+quoteIdent(n)+" is listed twice")
			}
		}
		if !p.acceptKeyword("ASC") {
			p.acceptKeyword("DESC")
		}
		names = append(names, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return names, p.expectPunct(")")
}

// indexElement reads an index declared as a table element or added by
// ALTER TABLE ... ADD: {INDEX | KEY | UNIQUE [INDEX | KEY]} [name] [USING
// type] (col, ...) [USING type], after an optional CONSTRAINT [name]
// whose name it takes when the index has none. An index without a name
// is named after its first column, as MySQL names it (col_2, col_3, ...
// when taken). taken reports whether an index name is in use.
func (p *parser) indexElement(constraint string, taken func(string) bool) (metadata.DeclaredIndex, error) {
	var ix metadata.DeclaredIndex
	t := p.peek()
	switch {
	case p.acceptKeyword("UNIQUE"):
		ix.Unique = true
		if !p.acceptKeyword("INDEX") {
			p.acceptKeyword("KEY")
		}
	case p.isKeyword(t, "FULLTEXT"), p.isKeyword(t, "SPATIAL"):
		return ix, p.noIndexKind(t)
	case p.acceptKeyword("INDEX"), p.acceptKeyword("KEY"):
	default:
		return ix, p.expected("INDEX, KEY or UNIQUE")
	}
	if n := p.peek(); (n.kind == tokIdent || n.kind == tokQuotedIdent) && !p.isKeyword(n, "USING") {
		ix.Name, _ = p.ident("index name")
	}
	p.indexType()
	var err error
	if ix.Columns, err = p.indexColumns(); err != nil {
		return ix, err
	}
	p.indexType()
	if ix.Name == "" {
		ix.Name = constraint
	}
	if ix.Name == "" {
		ix.Name = freeIndexName(ix.Columns[0], taken)
	}
	return ix, nil
}

// freeIndexName is base, or base_2, base_3, ... when taken.
func freeIndexName(base string, taken func(string) bool) string {
	name := base
	for n := 2; taken(name); n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	return name
}

func (p *parser) alter() (Statement, error) {
	if err := p.expectKeyword("TABLE"); err != nil {
		return nil, err
	}
	path, err := p.tablePath()
	if err != nil {
		return nil, err
	}
	switch {
	case p.acceptKeyword("ADD"):
		if ix, ok, err := p.alterAddIndex(); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return &CreateIndex{Table: path, Index: ix}, nil
		}
		if st, ok, err := p.alterConstraint(path, true); ok {
			return st, err
		}
		if p.acceptKeyword("IF", "NOT", "EXISTS") {
			if err := p.expectKeyword("PARTITION"); err != nil {
				return nil, err
			}
			spec, err := p.partitionSpec()
			return &AddPartition{Table: path, IfNotExists: true, Spec: spec}, err
		}
		if p.isKeyword(p.peek(), "PARTITION") && p.peekAt(1).kind == tokPunct && p.peekAt(1).text == "(" {
			p.i++
			spec, err := p.partitionSpec()
			return &AddPartition{Table: path, Spec: spec}, err
		}
		return p.addColumns(path)
	case p.isKeyword(p.peek(), "MODIFY"), p.isKeyword(p.peek(), "CHANGE"), p.isKeyword(p.peek(), "ALTER"):
		return nil, &PosError{Pos: p.peek().pos, Err: errorf(metadata.ErrUnsupported, "Not support modify column now.")}
	case p.isKeyword(p.peek(), "RENAME") && p.isKeyword(p.peekAt(1), "COLUMN"):
		return nil, &PosError{Pos: p.peek().pos, Err: errorf(metadata.ErrUnsupported, "Not support rename column now.")}
	case p.isKeyword(p.peek(), "DROP") && (p.isKeyword(p.peekAt(1), "COLUMN") ||
		(p.peekAt(1).kind == tokIdent || p.peekAt(1).kind == tokQuotedIdent) &&
			!p.isKeyword(p.peekAt(1), "INDEX") && !p.isKeyword(p.peekAt(1), "KEY") && !p.isKeyword(p.peekAt(1), "PARTITION") &&
			!p.isKeyword(p.peekAt(1), "IF") && !p.isKeyword(p.peekAt(1), "CONSTRAINT") && !p.isKeyword(p.peekAt(1), "FOREIGN") &&
			!p.isKeyword(p.peekAt(1), "PRIMARY") && !p.isKeyword(p.peekAt(1), "CHECK")):
		return nil, &PosError{Pos: p.peek().pos, Err: errorf(metadata.ErrUnsupported, "Not support drop column now.")}
	case p.acceptKeyword("DROP"):
		if p.acceptKeyword("INDEX") || p.acceptKeyword("KEY") {
			ie := p.acceptKeyword("IF", "EXISTS")
			name, err := p.ident("index name")
			if err != nil {
				return nil, err
			}
			return &DropIndex{Table: path, Name: name, IfExists: ie}, nil
		}
		if st, ok, err := p.alterConstraint(path, false); ok {
			return st, err
		}
		ie := p.acceptKeyword("IF", "EXISTS")
		if err := p.expectKeyword("PARTITION"); err != nil {
			return nil, err
		}
		spec, err := p.partitionSpec()
		return &DropPartition{Table: path, IfExists: ie, Spec: spec}, err
	case p.acceptKeyword("SET"):
		opts, err := p.options()
		return &SetOptions{Table: path, Options: opts}, err
	}
	return nil, p.expected("ADD, DROP or SET")
}

// addColumns reads the columns of ALTER TABLE t ADD [COLUMN] c TYPE
// [, ADD [COLUMN] c2 TYPE ...], or MySQL's ADD [COLUMN] (c TYPE, ...),
// after the first ADD. Fluss adds only nullable columns, only at the end:
// NOT NULL (unless a DEFAULT gives the rows stored a value), a key,
// AUTO_INCREMENT, FIRST and AFTER are refused (in Fluss's words where it
// has them).
func (p *parser) addColumns(path metadata.TablePath) (Statement, error) {
	st := &AddColumn{Table: path}
	for {
		// COLUMN is optional, and a column may itself be named "column":
		// skip the word only when a column name and a type name follow.
		if p.isKeyword(p.peek(), "COLUMN") {
			name, typ := p.peekAt(1), p.peekAt(2)
			if (name.kind == tokIdent || name.kind == tokQuotedIdent) && typ.kind == tokIdent &&
				!p.isKeyword(typ, "NOT") && !p.isKeyword(typ, "NULL") && !p.isKeyword(typ, "COMMENT") && !p.isKeyword(typ, "PRIMARY") {
				p.i++
			} else if t := p.peekAt(1); t.kind == tokPunct && t.text == "(" {
				p.i++
			}
		}
		if t := p.peek(); t.kind == tokPunct && t.text == "(" {
			p.i++
			for {
				if err := p.addColumn(st); err != nil {
					return nil, err
				}
				if !p.acceptPunct(",") {
					break
				}
			}
			if err := p.expectPunct(")"); err != nil {
				return nil, err
			}
		} else if err := p.addColumn(st); err != nil {
			return nil, err
		}
		if !p.acceptPunct(",") {
			return st, nil
		}
		if err := p.expectKeyword("ADD"); err != nil {
			return nil, err
		}
	}
}

// addColumn reads one column definition of ADD COLUMN into st.
func (p *parser) addColumn(st *AddColumn) error {
	colTok := p.peek()
	col, attrs, err := p.columnDef()
	if err != nil {
		return err
	}
	if attrs.autoInc {
		return &PosError{Pos: colTok.pos, Err: errorf(metadata.ErrUnsupported,
			"column %s added by ALTER TABLE cannot be AUTO_INCREMENT", quoteIdent(col.Name))}
	}
	if col.NotNull && col.Default == nil || attrs.pk {
		return &PosError{Pos: colTok.pos, Err: errorf(metadata.ErrUnsupported, "Column %s must be nullable.", col.Name)}
	}
	if t := p.peek(); p.isKeyword(t, "FIRST") || p.isKeyword(t, "AFTER") {
		return &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported, "Only support addColumn column at last now.")}
	}
	st.Columns = append(st.Columns, col)
	return nil
}

// alterAddIndex reads the index of ALTER TABLE t ADD [CONSTRAINT [name]]
// {INDEX | KEY | UNIQUE ...}; ok is false, and nothing read, when ADD is
// followed by something else (a column).
func (p *parser) alterAddIndex() (ix metadata.DeclaredIndex, ok bool, err error) {
	start := p.i
	constraint := ""
	if p.acceptKeyword("CONSTRAINT") {
		if n := p.peek(); (n.kind == tokIdent || n.kind == tokQuotedIdent) && !p.isKeyword(n, "UNIQUE") {
			constraint, _ = p.ident("constraint name")
		}
		if !p.isKeyword(p.peek(), "UNIQUE") {
			p.i = start
			return ix, false, nil
		}
	}
	t := p.peek()
	switch {
	case p.isKeyword(t, "UNIQUE"), p.isKeyword(t, "FULLTEXT"), p.isKeyword(t, "SPATIAL"):
	case (p.isKeyword(t, "INDEX") || p.isKeyword(t, "KEY")) && p.isTableConstraint(t):
	default:
		p.i = start
		return ix, false, nil
	}
	// An index added without a name is named after its first column, as
	// in MySQL; when the table has an index of that name already, the
	// statement fails naming it.
	ix, err = p.indexElement(constraint, func(string) bool { return false })
	return ix, true, err
}

func (p *parser) show() (Statement, error) {
	switch {
	case p.acceptKeyword("DATABASES"):
		return &ShowDatabases{}, nil
	case p.acceptKeyword("TABLES"):
		if p.acceptKeyword("FROM") || p.acceptKeyword("IN") {
			db, err := p.ident("database name")
			return &ShowTables{Database: db}, err
		}
		return &ShowTables{}, nil
	case p.acceptKeyword("PARTITIONS"):
		path, err := p.tablePath()
		return &ShowPartitions{Table: path}, err
	case p.acceptKeyword("INDEX"), p.acceptKeyword("INDEXES"), p.acceptKeyword("KEYS"):
		if !p.acceptKeyword("FROM") {
			if err := p.expectKeyword("IN"); err != nil {
				return nil, err
			}
		}
		path, err := p.tablePath()
		if err != nil {
			return nil, err
		}
		if p.acceptKeyword("FROM") || p.acceptKeyword("IN") {
			if path.Database, err = p.ident("database name"); err != nil {
				return nil, err
			}
		}
		return &ShowIndex{Table: path}, nil
	case p.acceptKeyword("VARIABLES"), p.acceptKeyword("SESSION", "VARIABLES"), p.acceptKeyword("GLOBAL", "VARIABLES"),
		p.acceptKeyword("LOCAL", "VARIABLES"):
		return p.showVariables()
	case p.acceptKeyword("CREATE"):
		view := p.acceptKeyword("VIEW")
		if !view {
			if err := p.expectKeyword("TABLE"); err != nil {
				return nil, err
			}
		}
		path, err := p.tablePath()
		return &ShowCreateTable{Table: path, View: view}, err
	}
	return nil, p.expected("DATABASES, TABLES, PARTITIONS, INDEX, VARIABLES, CREATE TABLE or CREATE VIEW")
}

func (p *parser) call() (Statement, error) {
	var parts []string
	for {
		n, err := p.ident("procedure name")
		if err != nil {
			return nil, err
		}
		parts = append(parts, strings.ToLower(n))
		if !p.acceptPunct(".") {
			break
		}
	}
	s := &Call{Procedure: strings.Join(parts, ".")}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	if p.acceptPunct(")") {
		return s, nil
	}
	err := p.commaList(func() error {
		a, err := p.callArg()
		s.Args = append(s.Args, a)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, p.expectPunct(")")
}

// callArg reads a literal or a placeholder.
func (p *parser) callArg() (Expr, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.i++
		return &Literal{Value: t.text, T: metadata.StringType()}, nil
	case t.kind == tokNumber:
		p.i++
		return p.numberAt(t, t.text)
	case t.kind == tokPunct && t.text == "-" && p.peekAt(1).kind == tokNumber:
		p.i += 2
		return p.numberAt(t, "-"+p.toks[p.i-1].text)
	case p.acceptKeyword("NULL"):
		return &Literal{}, nil
	case p.acceptKeyword("TRUE"):
		return &Literal{Value: true, T: metadata.BooleanType()}, nil
	case p.acceptKeyword("FALSE"):
		return &Literal{Value: false, T: metadata.BooleanType()}, nil
	case t.kind == tokParam:
		p.i++
		return p.params.param(p.src, t)
	}
	return nil, p.expected("a literal or placeholder")
}

func (p *parser) numberAt(t token, text string) (Expr, error) {
	l, err := numberLiteral(text)
	if err != nil {
		return nil, &PosError{Pos: t.pos, Err: err}
	}
	return l, nil
}

// createTable parses what follows CREATE TABLE, in Fluss's form (Flink
// SQL) or MySQL's as ORMs emit it: MySQL's type names (typeNames),
// AUTO_INCREMENT (the table option auto-increment.fields), PRIMARY KEY
// without NOT ENFORCED, FOREIGN KEY clauses (recorded in the
// descriptor's ForeignKeys, not enforced), and secondary INDEX, KEY,
// UNIQUE and CHECK clauses and ENGINE or character-set options, which
// are accepted without effect and named in the statement's Notes.
func (p *parser) createTable() (Statement, error) {
	s := &CreateTable{IfNotExists: p.acceptKeyword("IF", "NOT", "EXISTS")}
	d := &s.Table
	var err error
	if d.Path, err = p.tablePath(); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var pkToks []token
	autoInc, autoTok := "", token{}
	indexNamed := func(name string) bool {
		return slices.ContainsFunc(d.Indexes, func(ix metadata.DeclaredIndex) bool { return strings.EqualFold(ix.Name, name) })
	}
	for {
		t := p.peek()
		constraint := ""
		if p.isKeyword(t, "CONSTRAINT") {
			p.i++
			if !p.isKeyword(p.peek(), "PRIMARY") && !p.isTableConstraint(p.peek()) {
				if constraint, err = p.ident("constraint name"); err != nil {
					return nil, err
				}
			}
			if !p.isKeyword(p.peek(), "PRIMARY") && !p.isTableConstraint(p.peek()) {
				return nil, p.expected("PRIMARY KEY, UNIQUE, FOREIGN KEY or CHECK")
			}
		}
		switch {
		case p.isKeyword(p.peek(), "PRIMARY") && p.isKeyword(p.peekAt(1), "KEY"):
			p.i += 2
			if d.Schema.PrimaryKey != nil {
				return nil, p.errAt(t, "the primary key is declared twice")
			}
			p.indexType()
			keys, toks, err := p.identList("primary key column")
			if err != nil {
				return nil, err
			}
			p.indexType()
			p.notEnforced()
			d.Schema.PrimaryKey, pkToks = keys, toks
		case p.isForeignKey():
			fk, err := p.foreignKey(constraint) // CONSTRAINT name FOREIGN KEY
			if err != nil {
				return nil, err
			}
			d.ForeignKeys = append(d.ForeignKeys, fk)
			s.Notes = append(s.Notes, foreignKeyNote(fk))
		case p.isTableConstraint(p.peek()) && !p.isKeyword(p.peek(), "FOREIGN") && !p.isKeyword(p.peek(), "CHECK"):
			ix, err := p.indexElement(constraint, indexNamed)
			if err != nil {
				return nil, err
			}
			d.Indexes = append(d.Indexes, ix)
		case p.isTableConstraint(p.peek()):
			note, err := p.skipElement(t)
			if err != nil {
				return nil, err
			}
			s.Notes = append(s.Notes, note)
		default:
			col, attrs, err := p.columnDef()
			if err != nil {
				return nil, err
			}
			for _, prev := range d.Schema.Columns {
				if strings.EqualFold(prev.Name, col.Name) {
					return nil, &PosError{Pos: t.pos, Err: errorf(metadata.ErrExists,
						"column %s is declared twice", quoteIdent(col.Name))}
				}
			}
			if attrs.pk {
				if d.Schema.PrimaryKey != nil {
					return nil, p.errAt(t, "the primary key is declared twice")
				}
				d.Schema.PrimaryKey, pkToks = []string{col.Name}, []token{t}
			}
			if attrs.autoInc {
				if autoInc != "" {
					return nil, &PosError{Pos: t.pos, Err: errorf(metadata.ErrInvalidOption,
						"columns %s and %s are both AUTO_INCREMENT; a table has at most one", quoteIdent(autoInc), quoteIdent(col.Name))}
				}
				autoInc, autoTok = col.Name, t
			}
			s.Notes = append(s.Notes, attrs.notes...)
			d.Schema.Columns = append(d.Schema.Columns, col)
			if attrs.unique {
				d.Indexes = append(d.Indexes, metadata.DeclaredIndex{Name: freeIndexName(col.Name, indexNamed), Columns: []string{col.Name}, Unique: true})
			}
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	if len(d.Schema.Columns) == 0 {
		return nil, p.errAt(p.toks[p.i-1], "a table needs at least one column")
	}
	var partToks []token
	seen := map[string]bool{}
	for {
		t := p.peek()
		var clause string
		switch {
		case p.acceptKeyword("COMMENT"):
			clause = "COMMENT"
			p.acceptPunct("=")
			d.Comment, err = p.stringLit("table comment")
		case p.acceptKeyword("PARTITIONED", "BY"):
			clause = "PARTITIONED BY"
			d.PartitionKeys, partToks, err = p.identList("partition key")
		case p.acceptKeyword("WITH"):
			clause = "WITH"
			d.Options, err = p.options()
		case p.isKeyword(t, "AUTO_INCREMENT"):
			return nil, &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported,
				"AUTO_INCREMENT = n (a start value) is not supported: auto-increment values start at 1, as in Fluss")}
		default:
			var note string
			if note, err = p.mysqlTableOption(); err != nil {
				return nil, err
			}
			if note != "" {
				s.Notes = append(s.Notes, note)
				p.acceptPunct(",")
				continue
			}
			clause = ""
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
	// Keys must name declared columns; the catalog checks the rest (key
	// types, partition keys within the primary key, options).
	for i, k := range d.Schema.PrimaryKey {
		idx := d.Schema.ColumnIndex(k)
		if idx < 0 {
			return nil, &PosError{Pos: pkToks[i].pos, Err: errorf(metadata.ErrNotFound,
				"primary key column %s is not a column of the table", quoteIdent(k))}
		}
		d.Schema.Columns[idx].NotNull = true
	}
	for i, k := range d.PartitionKeys {
		if d.Schema.ColumnIndex(k) < 0 {
			return nil, &PosError{Pos: partToks[i].pos, Err: errorf(metadata.ErrNotFound,
				"partition key %s is not a column of the table", quoteIdent(k))}
		}
	}
	if autoInc != "" {
		if prev, ok := d.Options[metadata.OptAutoIncrementFields]; ok && !strings.EqualFold(strings.TrimSpace(prev), autoInc) {
			return nil, &PosError{Pos: autoTok.pos, Err: errorf(metadata.ErrInvalidOption,
				"column %s is AUTO_INCREMENT but the WITH clause says %s = %s", quoteIdent(autoInc), quoteString(metadata.OptAutoIncrementFields), quoteString(prev))}
		}
		if d.Options == nil {
			d.Options = map[string]string{}
		}
		d.Options[metadata.OptAutoIncrementFields] = autoInc
	}
	return s, nil
}

// notEnforced reads the NOT ENFORCED of a primary key. Flink requires it
// because it enforces no key; MySQL does not write it. Either way a fluss
// key is never checked: an INSERT of an existing key upserts.
func (p *parser) notEnforced() { p.acceptKeyword("NOT", "ENFORCED") }

// indexType skips MySQL's USING BTREE | HASH of an index.
func (p *parser) indexType() {
	if p.isKeyword(p.peek(), "USING") && p.peekAt(1).kind == tokIdent {
		p.i += 2
	}
}

// isTableConstraint reports whether t starts one of MySQL's table
// elements other than a column and the primary key: INDEX, KEY, UNIQUE,
// FULLTEXT, SPATIAL, FOREIGN KEY or CHECK. A column may carry such a name
// (`key` VARCHAR(10)): the word followed by a data type is a column.
// t is the next token.
func (p *parser) isTableConstraint(t token) bool {
	if t.kind != tokIdent {
		return false
	}
	switch strings.ToUpper(t.text) {
	case "INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK":
	default:
		return false
	}
	next := p.peekAt(1)
	if next.kind == tokIdent {
		if _, isType := lookupTypeName(next.text); isType {
			return false
		}
	}
	return next.kind != tokPunct || next.text == "("
}

// skipElement skips a table element that fluss accepts without effect,
// up to the ',' or ')' that ends it, and returns the note that says so.
func (p *parser) skipElement(start token) (string, error) {
	depth := 0
	last := start
	for {
		t := p.peek()
		switch {
		case t.kind == tokEOF:
			return "", p.expected("')'")
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			if depth == 0 {
				return ignoredNote(p.src[start.pos:last.end], start.text), nil
			}
			depth--
		case t.kind == tokPunct && t.text == "," && depth == 0:
			return ignoredNote(p.src[start.pos:last.end], start.text), nil
		}
		last = p.advance()
	}
}

// ignoredNote says why a MySQL clause has no effect; kind is its first
// word.
func ignoredNote(clause, kind string) string {
	why := "fluss has no secondary indexes (a WHERE that fixes the whole primary key is a point lookup, anything else a scan)"
	switch strings.ToUpper(kind) {
	case "CONSTRAINT":
		why = "fluss enforces no constraint but the primary key, which upserts"
	case "UNIQUE":
		why = "fluss enforces no uniqueness but the primary key's, which upserts"
	case "CHECK":
		why = "fluss enforces no CHECK constraints"
	case "ENGINE":
		why = "fluss has one storage engine"
	case "CHARSET", "CHARACTER", "COLLATE", "DEFAULT":
		why = "strings are UTF-8 and compare byte-wise"
	}
	return "ignored " + clause + ": " + why
}

// mysqlTableOption reads one of MySQL's table options that fluss accepts
// without effect: ENGINE, [DEFAULT] CHARSET, CHARACTER SET and COLLATE,
// each with an optional '='. It returns the note, or "" when the next
// tokens are no such option.
func (p *parser) mysqlTableOption() (string, error) {
	start := p.peek()
	save := p.i
	p.acceptKeyword("DEFAULT")
	kind := p.peek().text
	switch {
	case p.acceptKeyword("ENGINE"), p.acceptKeyword("CHARSET"), p.acceptKeyword("CHARACTER", "SET"),
		p.acceptKeyword("COLLATE"):
	default:
		p.i = save
		return "", nil
	}
	p.acceptPunct("=")
	t := p.peek()
	if t.kind != tokIdent && t.kind != tokString && t.kind != tokQuotedIdent {
		return "", p.expected("a name")
	}
	p.i++
	return ignoredNote(p.src[start.pos:t.end], kind), nil
}

// columnAttrs are what a column definition says besides the column.
type columnAttrs struct {
	pk      bool // PRIMARY KEY on the column
	autoInc bool // AUTO_INCREMENT
	unique  bool // UNIQUE [KEY]: a UNIQUE index named after the column
	notes   []string
}

// columnDef reads name TYPE and the column's options in any order: [NOT]
// NULL, DEFAULT (columnDefault), PRIMARY KEY [NOT ENFORCED], COMMENT
// '...', and MySQL's AUTO_INCREMENT, UNIQUE [KEY], CHARACTER SET, COLLATE
// and CHECK (...). ON UPDATE is refused: a default applies to new rows
// only.
func (p *parser) columnDef() (metadata.Column, columnAttrs, error) {
	var c metadata.Column
	var a columnAttrs
	var err error
	var nullDefault token // the DEFAULT of DEFAULT NULL
	if c.Name, err = p.ident("column name"); err != nil {
		return c, a, err
	}
	typeStart := p.i
	if c.Type, err = p.dataType(0); err != nil {
		return c, a, err
	}
	c.DeclaredType = declaredType(p.toks[typeStart:p.i], c.Type)
	for {
		t := p.peek()
		switch {
		case p.acceptKeyword("NOT", "NULL"):
			c.NotNull = true
		case p.acceptKeyword("NULL"):
		case p.acceptKeyword("PRIMARY", "KEY"):
			p.notEnforced()
			a.pk = true
		case p.acceptKeyword("COMMENT"):
			if c.Comment, err = p.stringLit("column comment"); err != nil {
				return c, a, err
			}
		case p.acceptKeyword("AUTO_INCREMENT"):
			a.autoInc = true
		case p.acceptKeyword("DEFAULT"):
			if c.Default, err = p.columnDefault(c.Name); err != nil {
				return c, a, err
			}
			if c.Default == nil {
				nullDefault = t
			}
		case p.isKeyword(t, "ON") && p.isKeyword(p.peekAt(1), "UPDATE"):
			return c, a, &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported,
				"ON UPDATE on column %s is not supported: a column's DEFAULT applies to new rows only, and an UPDATE sets what it lists", quoteIdent(c.Name))}
		case p.acceptKeyword("UNIQUE"):
			p.acceptKeyword("KEY")
			a.unique = true
		case p.acceptKeyword("CHARACTER", "SET"), p.acceptKeyword("CHARSET"), p.acceptKeyword("COLLATE"):
			n := p.peek()
			if _, err := p.ident("a character set or collation"); err != nil {
				return c, a, err
			}
			a.notes = append(a.notes, ignoredNote(p.src[t.pos:n.end]+" on column "+quoteIdent(c.Name), t.text))
		case p.isKeyword(t, "CHECK") && p.peekAt(1).kind == tokPunct && p.peekAt(1).text == "(":
			p.i++
			if err := p.skipParens(); err != nil {
				return c, a, err
			}
			a.notes = append(a.notes, ignoredNote("CHECK on column "+quoteIdent(c.Name), "CHECK"))
		default:
			if nullDefault.kind != tokEOF && c.NotNull {
				return c, a, &PosError{Pos: nullDefault.pos, Err: errorf(metadata.ErrInvalidValue,
					"column %s is NOT NULL and its DEFAULT is NULL", quoteIdent(c.Name))}
			}
			return c, a, nil
		}
	}
}

// columnDefault reads what follows DEFAULT in the definition of column
// name: NULL (no default: nil), a constant (a string, a number with an
// optional sign, TRUE or FALSE), or the statement's time, written
// CURRENT_TIMESTAMP[([p])], NOW([p]), LOCALTIMESTAMP[([p])] or
// LOCALTIME[([p])], all kept as CURRENT_TIMESTAMP[(p)] as MySQL shows
// them. Whether the value fits the column's type is checked when the
// table is created (metadata.NewTableInfo).
func (p *parser) columnDefault(name string) (*metadata.ColumnDefault, error) {
	t := p.peek()
	switch {
	case p.acceptKeyword("NULL"):
		return nil, nil
	case t.kind == tokString:
		p.i++
		return &metadata.ColumnDefault{Value: t.text, Quoted: true}, nil
	case t.kind == tokNumber:
		p.i++
		return &metadata.ColumnDefault{Value: t.text}, nil
	case t.kind == tokPunct && (t.text == "-" || t.text == "+") && p.peekAt(1).kind == tokNumber:
		p.i += 2
		sign := t.text
		if sign == "+" {
			sign = ""
		}
		return &metadata.ColumnDefault{Value: sign + p.toks[p.i-1].text}, nil
	case p.acceptKeyword("TRUE"):
		return &metadata.ColumnDefault{Value: "true"}, nil
	case p.acceptKeyword("FALSE"):
		return &metadata.ColumnDefault{Value: "false"}, nil
	case t.kind == tokIdent:
		word := strings.ToUpper(t.text)
		switch word {
		case "CURRENT_TIMESTAMP", "NOW", "LOCALTIMESTAMP", "LOCALTIME":
		default:
			return nil, &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported,
				"DEFAULT %s on column %s is not supported: a default is a constant or CURRENT_TIMESTAMP", t.text, quoteIdent(name))}
		}
		p.i++
		expr := metadata.CurrentTimestamp
		if !p.acceptPunct("(") {
			if word == "NOW" {
				return nil, p.expected("'(' after NOW")
			}
			return &metadata.ColumnDefault{Expr: expr}, nil
		}
		if n := p.peek(); n.kind == tokNumber {
			prec, err := strconv.Atoi(n.text)
			if err != nil || prec > metadata.MaxTimePrecision {
				return nil, p.errAt(n, fmt.Sprintf("the precision of CURRENT_TIMESTAMP on column %s must be an integer in [0, %d]", quoteIdent(name), metadata.MaxTimePrecision))
			}
			p.i++
			if prec > 0 {
				expr += "(" + strconv.Itoa(prec) + ")"
			}
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		return &metadata.ColumnDefault{Expr: expr}, nil
	case t.kind == tokPunct && t.text == "(":
		return nil, &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported,
			"DEFAULT (expression) on column %s is not supported: a default is a constant or CURRENT_TIMESTAMP", quoteIdent(name))}
	}
	return nil, p.expected("a constant or CURRENT_TIMESTAMP after DEFAULT")
}

// skipParens skips a balanced '(' ... ')'.
func (p *parser) skipParens() error {
	if err := p.expectPunct("("); err != nil {
		return err
	}
	for depth := 1; depth > 0; {
		t := p.advance()
		switch {
		case t.kind == tokEOF:
			return p.expected("')'")
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			depth--
		}
	}
	return nil
}

// flussTypeNames are the type names of Fluss's DDL whose MySQL name
// (metadata.DataType.MySQLType) is spelled otherwise: a column written
// with one of them keeps no declared type.
var flussTypeNames = map[string]bool{"STRING": true, "BYTES": true, "TIMESTAMP_LTZ": true, "ARRAY": true,
	"MAP": true, "ROW": true, "BOOLEAN": true, "TIMESTAMP": true}

// declaredType is the MySQL-dialect spelling of a column's type, from
// its tokens, when it differs from MySQL's name for the type fluss stores
// (metadata.Column.DeclaredType): "varchar(191)" for a STRING, "bigint
// unsigned" for a BIGINT.
func declaredType(toks []token, t metadata.DataType) string {
	if len(toks) == 0 || flussTypeNames[strings.ToUpper(toks[0].text)] {
		return ""
	}
	var b strings.Builder
	for i, tk := range toks {
		if i > 0 && !isPunct(tk, "(),") && !isPunct(toks[i-1], "(,") {
			b.WriteByte(' ')
		}
		b.WriteString(strings.ToLower(tk.text))
	}
	if d := b.String(); d != t.MySQLType() {
		return d
	}
	return ""
}

func isPunct(t token, set string) bool {
	return t.kind == tokPunct && len(t.text) == 1 && strings.Contains(set, t.text)
}
