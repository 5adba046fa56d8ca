// Package query runs statements. A Session is one statement of a
// connection: it binds the statement against the catalog (the engine's
// tables and views, and information_schema), turns the bound plan into a
// tree of exec operators and runs it, and writes what a write read.
//
// Reads: each table is read through the single-table path (a point
// lookup or the table's split planner, pushdown and lakeunion readers,
// behind Reader, which Session implements); a query over a FROM tree
// (Open) joins its tables with hash or lookup joins (a nested loop when
// the condition has no equality) and runs the clauses above the tree
// through exec.Build as they run over one table; a set operation
// (OpenCompound) runs each SELECT so, then exec.SetOp over them. Query
// returns a Result, its columns and its operators, which SELECT's rows,
// QueryArrow, EXPLAIN and the other statements that return rows share.
//
// Writes: UPDATE and DELETE read their matching rows, INSERT ... SELECT
// and CREATE TABLE ... AS their query, through the same read path, to
// its end, before anything is written; then one storage.Engine.Commit
// writes them, or, in a transaction, its write buffer takes them. A read
// never sees the statement's own rows.
//
// Rules:
//   - Inside a transaction every read is at its read view (Session.View)
//     with the transaction's own buffered writes laid over it
//     (txoverlay.go): a key table's buffered rows replace the view's rows
//     of their keys and its buffered deletes hide them, a log table's
//     buffered appends follow the view's rows. Scans, point lookups and
//     lookup joins, and so SELECTs and the reads of UPDATE, DELETE and
//     INSERT ... SELECT, all see them; a table the transaction did not
//     write reads the view alone, at no extra cost. The virtual tables
//     t$changelog and t$lake read the view alone.
//   - The rows a statement holds (INSERT ... SELECT, CREATE TABLE ... AS,
//     a subquery's result) and what the operators hold are charged to
//     memory.limit (Session.MemoryLimit); past it, a statement fails with
//     exec.MemoryLimitError.
//   - A Result must be closed; it releases the KV snapshots its scans
//     pinned and stops their readers.
package query
