package metadata

import (
	"fmt"
	"strings"
)

// Column is one column of a table schema.
type Column struct {
	Name    string   `json:"name"`
	Type    DataType `json:"type"`
	NotNull bool     `json:"not_null,omitempty"`
	Comment string   `json:"comment,omitempty"`
	// ID is the stable column id; it never changes once assigned.
	ID int32 `json:"id"`
	// DeclaredType is the type as a MySQL-dialect CREATE TABLE wrote it,
	// lower case (varchar(191), bigint unsigned, datetime(3)), when that
	// differs from MySQL's name for Type; "" otherwise. It changes nothing
	// about the column: information_schema reports it, so that an ORM
	// comparing its model with the table sees the type it declared.
	DeclaredType string `json:"declared_type,omitempty"`
	// Default is the column's DEFAULT; nil when it has none (a row an
	// INSERT leaves the column out of holds NULL). Catalogs written
	// before defaults existed have none.
	Default *ColumnDefault `json:"default,omitempty"`
}

// Schema is the ordered list of a table's columns and its primary key.
// A Schema is immutable once built and safe for concurrent use.
type Schema struct {
	Columns    []Column `json:"columns"`
	PrimaryKey []string `json:"primary_key,omitempty"`
}

// ColumnIndex returns the index of the named column (case-insensitive),
// or -1.
func (s Schema) ColumnIndex(name string) int {
	for i, c := range s.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// ColumnNames returns the names of the columns in order.
func (s Schema) ColumnNames() []string {
	names := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		names[i] = c.Name
	}
	return names
}

// Indexes maps names to column indexes; an unknown name is ErrNotFound.
func (s Schema) Indexes(names []string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		idx := s.ColumnIndex(n)
		if idx < 0 {
			return nil, fmt.Errorf("column %q: %w", n, ErrNotFound)
		}
		out[i] = idx
	}
	return out, nil
}
