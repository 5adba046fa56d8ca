// Package sqlplan turns SQL text into inert statement plans.
//
// Parse reads one statement. DDL, SHOW, DESCRIBE, USE and CALL follow a
// small grammar of this package in the Flink/Fluss style; SELECT, INSERT,
// UPDATE and DELETE are parsed by xwb1989/sqlparser, which no other
// package imports, and its AST is converted once into this package's
// structs and Expr tree. EXPLAIN wraps a SELECT.
//
// BindSelect, BindInsert, BindUpdate and BindDelete resolve a parsed
// statement against a Catalog: tables and columns by name, placeholders by
// the arguments of one execution, and the type of every expression.
// Literals compared with a column take the column's type when nothing is
// lost. UPDATE and DELETE bind to a read of the rows they apply to (a
// SelectPlan) plus, for UPDATE, the assignments. `t$changelog` binds as a
// virtual table (ChangelogTable), and PointLookup tells when a query on a
// primary-key table names a single key.
//
// Rules:
//   - Statements and plans are values nobody mutates after construction;
//     binding copies, so one parsed statement serves concurrent executions.
//   - Every syntax error is a *SyntaxError carrying the byte offset of the
//     offending token; every other error wraps a metadata sentinel
//     (ErrNotFound, ErrInvalidValue, ErrInvalidType, ErrConstraint,
//     ErrUnsupported) and names what was wrong.
//   - User input never panics: the foreign parser runs under recover.
package sqlplan
