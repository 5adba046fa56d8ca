package sqlplan

import (
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// AddForeignKey is ALTER TABLE t ADD [CONSTRAINT [name]] FOREIGN KEY
// (c, ...) REFERENCES p (k, ...) [ON DELETE a] [ON UPDATE a], what GORM's
// AutoMigrate sends for an association: the key is recorded, not
// enforced. Key.Name is "" when the statement names none (the catalog
// names it as MySQL does, <table>_ibfk_<n>); Key.RefTable.Database is ""
// when the parent is unqualified.
type AddForeignKey struct {
	Table metadata.TablePath
	Key   metadata.ForeignKey
}

// DropConstraint is ALTER TABLE t DROP CONSTRAINT name or DROP FOREIGN
// KEY name: the foreign key called name stops being recorded.
type DropConstraint struct {
	Table metadata.TablePath
	Name  string
	// ForeignKey is set for DROP FOREIGN KEY.
	ForeignKey bool
}

func (*AddForeignKey) isStatement()   {}
func (*DropConstraint) isStatement()  {}
func (*AddForeignKey) NumInput() int  { return 0 }
func (*DropConstraint) NumInput() int { return 0 }
func (s *AddForeignKey) String() string {
	return "ALTER TABLE " + quotePath(s.Table) + " ADD " + formatForeignKey(s.Key)
}

func (s *DropConstraint) String() string {
	kind := "CONSTRAINT "
	if s.ForeignKey {
		kind = "FOREIGN KEY "
	}
	return "ALTER TABLE " + quotePath(s.Table) + " DROP " + kind + quoteIdent(s.Name)
}

// formatForeignKey renders a foreign key as a table element.
func formatForeignKey(fk metadata.ForeignKey) string {
	var b strings.Builder
	if fk.Name != "" {
		b.WriteString("CONSTRAINT " + quoteIdent(fk.Name) + " ")
	}
	b.WriteString("FOREIGN KEY (" + quoteIdents(fk.Columns) + ") REFERENCES " + quotePath(fk.RefTable) +
		" (" + quoteIdents(fk.RefColumns) + ")")
	if fk.OnDelete != "" {
		b.WriteString(" ON DELETE " + fk.OnDelete)
	}
	if fk.OnUpdate != "" {
		b.WriteString(" ON UPDATE " + fk.OnUpdate)
	}
	return b.String()
}

// isForeignKey reports whether the next tokens are FOREIGN KEY.
func (p *parser) isForeignKey() bool {
	return p.isKeyword(p.peek(), "FOREIGN") && p.isKeyword(p.peekAt(1), "KEY")
}

// foreignKey reads FOREIGN KEY [index_name] (c, ...) REFERENCES [db.]p
// (k, ...) [MATCH FULL | PARTIAL | SIMPLE] [ON DELETE action] [ON UPDATE
// action]; name is the CONSTRAINT's name, "" when none was given. MySQL
// names the constraint after CONSTRAINT, never after the index name,
// which names the index InnoDB builds on the columns and is skipped.
func (p *parser) foreignKey(name string) (metadata.ForeignKey, error) {
	fk := metadata.ForeignKey{Name: name}
	p.i += 2 // FOREIGN KEY
	if t := p.peek(); (t.kind == tokIdent || t.kind == tokQuotedIdent) && !p.isKeyword(t, "REFERENCES") {
		p.i++
	}
	var err error
	if fk.Columns, _, err = p.identList("foreign key column"); err != nil {
		return fk, err
	}
	if err := p.expectKeyword("REFERENCES"); err != nil {
		return fk, err
	}
	if fk.RefTable, err = p.tablePath(); err != nil {
		return fk, err
	}
	refTok := p.peek()
	if fk.RefColumns, _, err = p.identList("referenced column"); err != nil {
		return fk, err
	}
	if len(fk.RefColumns) != len(fk.Columns) {
		return fk, &PosError{Pos: refTok.pos, Err: errorf(metadata.ErrInvalidTable,
			"the foreign key has %d columns but references %d", len(fk.Columns), len(fk.RefColumns))}
	}
	if p.acceptKeyword("MATCH") {
		if !p.acceptKeyword("FULL") && !p.acceptKeyword("PARTIAL") && !p.acceptKeyword("SIMPLE") {
			return fk, p.expected("FULL, PARTIAL or SIMPLE")
		}
	}
	for p.isKeyword(p.peek(), "ON") {
		t := p.peek()
		var dst *string
		switch {
		case p.isKeyword(p.peekAt(1), "DELETE"):
			dst = &fk.OnDelete
		case p.isKeyword(p.peekAt(1), "UPDATE"):
			dst = &fk.OnUpdate
		default:
			return fk, p.errAt(p.peekAt(1), "expected DELETE or UPDATE")
		}
		if *dst != "" {
			return fk, p.errAt(t, "ON "+strings.ToUpper(p.peekAt(1).text)+" is given twice")
		}
		p.i += 2
		switch {
		case p.acceptKeyword("RESTRICT"):
			*dst = "RESTRICT"
		case p.acceptKeyword("CASCADE"):
			*dst = "CASCADE"
		case p.acceptKeyword("SET", "NULL"):
			*dst = "SET NULL"
		case p.acceptKeyword("SET", "DEFAULT"):
			*dst = "SET DEFAULT"
		case p.acceptKeyword("NO", "ACTION"):
			*dst = "NO ACTION"
		default:
			return fk, p.expected("RESTRICT, CASCADE, SET NULL, SET DEFAULT or NO ACTION")
		}
	}
	return fk, nil
}

// Note is what the session logs when the key is recorded.
func (s *AddForeignKey) Note() string { return foreignKeyNote(s.Key) }

// foreignKeyNote is what the session logs for a declared foreign key.
func foreignKeyNote(fk metadata.ForeignKey) string {
	return fmt.Sprintf("recorded %s: foreign keys are listed in information_schema but not enforced (a row may name a parent that does not exist, and ON DELETE/ON UPDATE actions are not applied)", formatForeignKey(fk))
}

// alterConstraint reads what follows ALTER TABLE t ADD or DROP when it is
// a constraint: ADD [CONSTRAINT [name]] FOREIGN KEY ..., DROP CONSTRAINT
// name, DROP FOREIGN KEY name. ok is false, with nothing read, when the
// next tokens are no constraint. add says which of ADD and DROP was read.
func (p *parser) alterConstraint(path metadata.TablePath, add bool) (st Statement, ok bool, err error) {
	if !add {
		switch {
		case p.isKeyword(p.peek(), "CONSTRAINT"):
			p.i++
			name, err := p.ident("constraint name")
			return &DropConstraint{Table: path, Name: name}, true, err
		case p.isForeignKey():
			p.i += 2
			name, err := p.ident("foreign key name")
			return &DropConstraint{Table: path, Name: name, ForeignKey: true}, true, err
		}
		return nil, false, nil
	}
	name := ""
	start := p.peek()
	if p.isKeyword(start, "CONSTRAINT") {
		// CONSTRAINT followed by a type is a column named constraint.
		next := p.peekAt(1)
		if next.kind == tokIdent {
			if _, isType := lookupTypeName(next.text); isType {
				return nil, false, nil
			}
		}
		p.i++
		if !p.isForeignKey() && !p.isKeyword(p.peek(), "UNIQUE") && !p.isKeyword(p.peek(), "PRIMARY") && !p.isKeyword(p.peek(), "CHECK") {
			if name, err = p.ident("constraint name"); err != nil {
				return nil, true, err
			}
		}
		if !p.isForeignKey() {
			return nil, true, &PosError{Pos: start.pos, Err: errorf(metadata.ErrUnsupported,
				"ALTER TABLE ... ADD CONSTRAINT %s is not supported: only a FOREIGN KEY can be added to a table after CREATE TABLE", strings.ToUpper(p.peek().text))}
		}
	} else if !p.isForeignKey() {
		return nil, false, nil
	}
	fk, err := p.foreignKey(name)
	return &AddForeignKey{Table: path, Key: fk}, true, err
}
