package metadata

import (
	"fmt"
	"strings"
	"time"
)

// ViewInfo is a view of the catalog: a named query, stored as the text
// CREATE VIEW gave it and parsed again at every use, so that it reads the
// tables as they are when it is queried. It is immutable; CREATE OR
// REPLACE VIEW stores a new one.
type ViewInfo struct {
	Path TablePath `json:"path"`
	// Query is the view's query (a SELECT, a WITH or a compound query) as
	// written, without the CREATE VIEW ... AS before it.
	Query string `json:"query"`
	// QueryDatabase is the database the query's unqualified table names
	// resolve in: the connection's when the view was created, as MySQL
	// resolves them, whichever database a later query of the view runs in.
	QueryDatabase string `json:"query_database"`
	// Columns are the names of the view's columns: those of its column
	// list, else those of its query's output when it was created.
	Columns   []string  `json:"columns"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate checks the view's names: a valid path, a query, at least one
// column, and no column named twice (names compare ignoring case, as
// column names do everywhere).
func (v *ViewInfo) Validate() error {
	if err := v.Path.Validate(); err != nil {
		return err
	}
	if err := ValidateName("database", v.QueryDatabase); err != nil {
		return fmt.Errorf("view %s: %w", v.Path, err)
	}
	if strings.TrimSpace(v.Query) == "" {
		return fmt.Errorf("%w: view %s has no query", ErrInvalidTable, v.Path)
	}
	if len(v.Columns) == 0 {
		return fmt.Errorf("%w: view %s has no columns", ErrInvalidTable, v.Path)
	}
	seen := make(map[string]bool, len(v.Columns))
	for _, c := range v.Columns {
		if c == "" {
			return fmt.Errorf("%w: view %s has a column without a name", ErrInvalidTable, v.Path)
		}
		k := strings.ToLower(c)
		if seen[k] {
			return fmt.Errorf("%w: view %s names column %s twice", ErrInvalidTable, v.Path, c)
		}
		seen[k] = true
	}
	return nil
}

// ViewError is returned where a statement names a view but needs a
// table (a write, DROP TABLE, SHOW PARTITIONS, ALTER TABLE). It matches
// ErrUnsupported.
type ViewError struct {
	Path TablePath
}

func (e *ViewError) Error() string {
	return fmt.Sprintf("%s is a view, not a table (a view is read by SELECT and dropped by DROP VIEW)", e.Path)
}

// Is makes a ViewError match ErrUnsupported.
func (e *ViewError) Is(target error) bool { return target == ErrUnsupported }
