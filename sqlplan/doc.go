// Package sqlplan turns SQL text into inert statement plans.
//
// Parse reads one statement. DDL, SHOW, DESCRIBE, USE and CALL follow a
// small grammar of this package in the Flink/Fluss style; SELECT and INSERT
// are parsed by xwb1989/sqlparser, which no other package imports, and its
// AST is converted once into this package's structs and Expr tree. EXPLAIN
// wraps a SELECT.
//
// BindSelect and BindInsert resolve a parsed statement against a Catalog:
// tables and columns by name, placeholders by the arguments of one
// execution, and the type of every expression. Literals compared with a
// column take the column's type when nothing is lost.
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
