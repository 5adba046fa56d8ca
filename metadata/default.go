package metadata

import (
	"fmt"
	"time"
)

// ColumnDefault is a column's DEFAULT: what a new row takes in a column
// an INSERT leaves out or gives as DEFAULT. It is a constant or the time
// the statement runs (CURRENT_TIMESTAMP). It is immutable once in a
// schema.
type ColumnDefault struct {
	// Value is a constant's text: a string literal's characters, a
	// number as written (with its sign), or true or false. CoerceValue
	// of it to the column's type gives the value.
	Value string `json:"value,omitempty"`
	// Quoted is true when Value was written as a string literal.
	Quoted bool `json:"quoted,omitempty"`
	// Expr is CURRENT_TIMESTAMP or CURRENT_TIMESTAMP(p) (NOW() and
	// LOCALTIMESTAMP are written so): the statement's time, in the
	// column's precision. Value is empty then.
	Expr string `json:"expr,omitempty"`
}

// CurrentTimestamp is the Expr of a DEFAULT CURRENT_TIMESTAMP.
const CurrentTimestamp = "CURRENT_TIMESTAMP"

// IsCurrentTimestamp reports whether the default is the statement's time.
func (d *ColumnDefault) IsCurrentTimestamp() bool { return d != nil && d.Expr != "" }

// MySQLText is the default as MySQL's information_schema.columns
// column_default shows it: a number as text, a string without quotes, a
// BOOLEAN as 1 or 0, CURRENT_TIMESTAMP[(p)].
func (d *ColumnDefault) MySQLText(t DataType) string {
	switch {
	case d.Expr != "":
		return d.Expr
	case t.Root == Boolean:
		if v, err := d.constant(t); err == nil && v == true {
			return "1"
		}
		return "0"
	}
	return d.Value
}

// constant is the value of a constant default in type t.
func (d *ColumnDefault) constant(t DataType) (any, error) {
	if t.Root == Boolean && !d.Quoted {
		// MySQL's BOOLEAN is TINYINT(1): DEFAULT 1 and DEFAULT 0 are
		// what its dumps write.
		switch d.Value {
		case "1":
			return true, nil
		case "0":
			return false, nil
		}
	}
	return CoerceValue(t, d.Value)
}

// DefaultValue is the value column c's default takes in a statement
// that runs at now in the session's zone loc (nil: UTC): nil for a
// column without a default; CURRENT_TIMESTAMP is now's wall clock in
// loc for a TIMESTAMP, as MySQL's DATETIME and TIMESTAMP show the
// session time zone's, and now's instant for a TIMESTAMP_LTZ. A default
// that does not fit the column is ErrInvalidValue naming both.
func (c Column) DefaultValue(now time.Time, loc *time.Location) (any, error) {
	d := c.Default
	if d == nil {
		return nil, nil
	}
	if d.Expr != "" {
		if c.Type.Root != Timestamp && c.Type.Root != TimestampLTZ {
			return nil, fmt.Errorf("%w: DEFAULT %s on column %q of type %s: only a TIMESTAMP or TIMESTAMP_LTZ column defaults to the current time", ErrInvalidValue, d.Expr, c.Name, c.Type)
		}
		if loc == nil {
			loc = time.UTC
		}
		return CoerceValue(c.Type, now.In(loc))
	}
	if c.Type.IsNested() {
		return nil, fmt.Errorf("%w: DEFAULT on column %q of type %s: a column of a nested type takes no default", ErrInvalidValue, c.Name, c.Type)
	}
	v, err := d.constant(c.Type)
	if err != nil {
		return nil, fmt.Errorf("DEFAULT %s on column %q: %w", d.SQL(), c.Name, err)
	}
	return v, nil
}

// SQL is the default as CREATE TABLE writes it after DEFAULT: 'text',
// a number, true or false, CURRENT_TIMESTAMP[(p)].
func (d *ColumnDefault) SQL() string {
	if d.Expr != "" {
		return d.Expr
	}
	if d.Quoted {
		return QuoteString(d.Value)
	}
	return d.Value
}

// validateDefault checks c's default against its type once, at CREATE
// TABLE: a bad default is an error naming the column and the value.
func validateDefault(c Column) error {
	if c.Default == nil {
		return nil
	}
	if c.Default.Expr == "" && c.Default.Value == "" && !c.Default.Quoted {
		return fmt.Errorf("%w: column %q has an empty DEFAULT", ErrInvalidTable, c.Name)
	}
	_, err := c.DefaultValue(time.Now(), time.UTC)
	return err
}

// HasDefaults reports whether some column has a default.
func (s Schema) HasDefaults() bool {
	for _, c := range s.Columns {
		if c.Default != nil {
			return true
		}
	}
	return false
}

// DefaultRow is the value of every column's default (Column.DefaultValue)
// in a statement that runs at now in loc, in schema order; nil where a
// column has none.
func (s Schema) DefaultRow(now time.Time, loc *time.Location) ([]any, error) {
	row := make([]any, len(s.Columns))
	for i, c := range s.Columns {
		v, err := c.DefaultValue(now, loc)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

// PadValue is what a row stored before column c was added (ALTER TABLE
// ... ADD COLUMN) reads in it: the column's constant default, as MySQL
// fills the rows it has, or NULL. An added column cannot default to the
// current time (AddColumns refuses it).
func (c Column) PadValue() any {
	if c.Default == nil || c.Default.Expr != "" {
		return nil
	}
	v, err := c.DefaultValue(time.Time{}, time.UTC)
	if err != nil {
		return nil // checked when the column was added
	}
	return v
}
