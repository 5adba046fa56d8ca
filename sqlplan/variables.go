package sqlplan

import (
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// VariableCatalog is a Catalog that also knows the connection's system
// variables, which @@name in a query reads (SELECT @@version,
// @@session.time_zone): a constant of the statement.
type VariableCatalog interface {
	Catalog
	// SystemVariable returns the value of @@name (name without the @@,
	// possibly with a session. scope), a string or an int64; an unknown
	// name is an error naming it.
	SystemVariable(name string) (any, error)
}

// variable binds @@name to its value; @name, a user variable, is
// refused.
func (b *binder) variable(c *ColumnRef) (Expr, error) {
	name, ok := strings.CutPrefix(c.Name, "@@")
	if !ok {
		return nil, unsupported("user variables (%s)", c.Name)
	}
	vc, ok := b.cat.(VariableCatalog)
	if !ok {
		return nil, unsupported("a system variable (%s) in %s here", c.Name, b.clause)
	}
	v, err := vc.SystemVariable(name)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case int64:
		return &Literal{Value: x, T: metadata.BigIntType()}, nil
	case string:
		return &Literal{Value: x, T: metadata.StringType()}, nil
	}
	return nil, errorf(metadata.ErrInvalidValue, "system variable %s has a value of type %T", c.Name, v)
}
