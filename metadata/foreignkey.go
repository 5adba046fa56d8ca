package metadata

import (
	"fmt"
	"slices"
	"strings"
)

// ForeignKey is a FOREIGN KEY a MySQL-dialect CREATE TABLE or ALTER TABLE
// ... ADD CONSTRAINT declared: recorded in the catalog and listed by
// information_schema (table_constraints, key_column_usage,
// referential_constraints), never enforced. A row may name a parent
// that does not exist, and deleting a parent touches no child, whatever
// OnDelete and OnUpdate say.
type ForeignKey struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	// RefTable is the parent table; its Database is always set.
	RefTable   TablePath `json:"ref_table"`
	RefColumns []string  `json:"ref_columns"`
	// OnDelete and OnUpdate are the referential actions as MySQL lists
	// them in information_schema.referential_constraints (RESTRICT,
	// CASCADE, SET NULL, NO ACTION, SET DEFAULT); "" is NO ACTION, the
	// default.
	OnDelete string `json:"on_delete,omitempty"`
	OnUpdate string `json:"on_update,omitempty"`
}

// ReferentialActions are the actions ON DELETE and ON UPDATE accept.
var ReferentialActions = []string{"RESTRICT", "CASCADE", "SET NULL", "NO ACTION", "SET DEFAULT"}

// Action returns a referential action as information_schema lists it:
// "" is NO ACTION.
func Action(a string) string {
	if a == "" {
		return "NO ACTION"
	}
	return a
}

// checkForeignKeys checks t's foreign keys against its own schema: each
// has a name no other constraint of the table has, names columns of the
// table, and as many parent columns as columns. The parent table is the
// caller's to check (see CheckReference): it may be created later.
func checkForeignKeys(t *TableInfo) error {
	seen := map[string]bool{}
	if t.HasPrimaryKey() {
		seen["primary"] = true
	}
	for _, ix := range t.Indexes {
		seen[strings.ToLower(ix.Name)] = true
	}
	for i := range t.ForeignKeys {
		fk := &t.ForeignKeys[i]
		if fk.Name == "" {
			return fmt.Errorf("%w: a foreign key of %s has no name", ErrInvalidTable, t.Path)
		}
		if seen[strings.ToLower(fk.Name)] {
			return fmt.Errorf("%w: table %s already has a constraint named %q", ErrExists, t.Path, fk.Name)
		}
		seen[strings.ToLower(fk.Name)] = true
		cols, err := resolveKeyColumns(t.Schema, "foreign key "+fk.Name, fk.Columns)
		if err != nil {
			return err
		}
		if len(cols) == 0 {
			return fmt.Errorf("%w: foreign key %q names no column", ErrInvalidTable, fk.Name)
		}
		fk.Columns = cols
		if len(fk.RefColumns) != len(cols) {
			return fmt.Errorf("%w: foreign key %q has %d columns but references %d", ErrInvalidTable, fk.Name, len(cols), len(fk.RefColumns))
		}
		for _, a := range []string{fk.OnDelete, fk.OnUpdate} {
			if a != "" && !slices.Contains(ReferentialActions, a) {
				return fmt.Errorf("%w: foreign key %q: unknown referential action %q (known: %s)", ErrInvalidTable, fk.Name, a, strings.Join(ReferentialActions, ", "))
			}
		}
	}
	return nil
}

// CheckReference checks that parent has the columns fk references, each
// of the type of the child's column (MySQL's check when
// FOREIGN_KEY_CHECKS is on), and returns fk with the parent's columns
// spelled as the parent spells them.
func CheckReference(child *TableInfo, fk ForeignKey, parent *TableInfo) (ForeignKey, error) {
	refs, err := resolveKeyColumns(parent.Schema, "referenced", fk.RefColumns)
	if err != nil {
		return fk, fmt.Errorf("foreign key %q references %s: %w", fk.Name, parent.Path, err)
	}
	for i, r := range refs {
		ci := child.Schema.ColumnIndex(fk.Columns[i])
		if ci < 0 {
			return fk, fmt.Errorf("%w: foreign key %q column %q: %w", ErrInvalidTable, fk.Name, fk.Columns[i], ErrNotFound)
		}
		ct := child.Schema.Columns[ci].Type
		pt := parent.Schema.Columns[parent.Schema.ColumnIndex(r)].Type
		if ct.Root != pt.Root {
			return fk, fmt.Errorf("%w: foreign key %q: column %q is %s but %s.%s is %s", ErrInvalidTable, fk.Name, fk.Columns[i], ct, parent.Path, r, pt)
		}
	}
	fk.RefColumns = refs
	return fk, nil
}

// AddForeignKey returns t with fk recorded (ALTER TABLE ... ADD
// CONSTRAINT ... FOREIGN KEY).
func AddForeignKey(t TableInfo, fk ForeignKey) (TableInfo, error) {
	t.ForeignKeys = append(slices.Clone(t.ForeignKeys), fk)
	if err := checkForeignKeys(&t); err != nil {
		return TableInfo{}, err
	}
	return t, nil
}

// DropForeignKey returns t without its foreign key called name (ALTER
// TABLE ... DROP CONSTRAINT | DROP FOREIGN KEY); a name the table has no
// foreign key of is ErrNotFound naming it.
func DropForeignKey(t TableInfo, name string) (TableInfo, error) {
	i := slices.IndexFunc(t.ForeignKeys, func(fk ForeignKey) bool { return strings.EqualFold(fk.Name, name) })
	if i < 0 {
		return TableInfo{}, fmt.Errorf("%w: table %s has no foreign key %q", ErrNotFound, t.Path, name)
	}
	t.ForeignKeys = slices.Delete(slices.Clone(t.ForeignKeys), i, i+1)
	return t, nil
}
