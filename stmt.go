package fluss

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/query"
	"github.com/flusslite/fluss/sqlplan"
)

// Stmt is a parsed statement. It is bound to the catalog and its arguments
// each time it runs, so a prepared statement sees tables created after it
// was prepared; a point lookup and an INSERT ... VALUES keep the part of
// their binding that does not depend on the arguments for as long as
// their table stays the same (prepared.go). Like its connection, it is
// used by one goroutine at a time.
type Stmt struct {
	conn   *Conn
	text   string
	parsed sqlplan.Statement
	closed bool
	// prepLookup and prepInsert are the kept bindings; nil until the first
	// execution that can keep one.
	prepLookup *preparedLookup
	prepInsert *preparedInsert
	// numInput caches NumInput, which database/sql asks at every
	// execution; valid when numInputSet.
	numInput    int
	numInputSet bool
	// argBuf holds the arguments of a write while it runs.
	argBuf []sqlplan.Arg
}

var (
	_ driver.Stmt              = (*Stmt)(nil)
	_ driver.StmtExecContext   = (*Stmt)(nil)
	_ driver.StmtQueryContext  = (*Stmt)(nil)
	_ driver.NamedValueChecker = (*Stmt)(nil)
)

// NumInput is the number of placeholders.
func (s *Stmt) NumInput() int {
	if !s.numInputSet {
		s.numInput, s.numInputSet = s.parsed.NumInput(), true
	}
	return s.numInput
}

// CheckNamedValue is the connection's CheckNamedValue, answered without
// reflection for the argument types most statements are given.
func (s *Stmt) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case int64, float64, bool, string, []byte, nil:
		return nil
	case int:
		nv.Value = int64(v)
		return nil
	case int32:
		nv.Value = int64(v)
		return nil
	}
	return s.conn.CheckNamedValue(nv)
}

// Close closes the statement. Idempotent.
func (s *Stmt) Close() error {
	s.closed = true
	return nil
}

// Exec runs the statement; use ExecContext.
func (s *Stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), valuesToNamed(args))
}

// Query runs the statement; use QueryContext.
func (s *Stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), valuesToNamed(args))
}

func valuesToNamed(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

// writeArgs is toArgs into a slice the statement reuses: a write is done
// with its arguments when it returns (binding copies the values out), and
// a statement runs one execution at a time.
func (s *Stmt) writeArgs(args []driver.NamedValue) []sqlplan.Arg {
	out := s.argBuf[:0]
	for _, a := range args {
		out = append(out, sqlplan.Arg{Ordinal: a.Ordinal, Name: a.Name, Value: a.Value})
	}
	s.argBuf = out
	return out
}

func toArgs(args []driver.NamedValue) []sqlplan.Arg {
	out := make([]sqlplan.Arg, len(args))
	for i, a := range args {
		out[i] = sqlplan.Arg{Ordinal: a.Ordinal, Name: a.Name, Value: a.Value}
	}
	return out
}

// ExecContext runs the statement and reports the rows it wrote.
func (s *Stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	c := s.conn.connector
	if !c.observed() {
		res, err := s.exec(ctx, args)
		s.conn.noteErr(err)
		return res, err
	}
	start := time.Now()
	res, err := s.exec(ctx, args)
	s.conn.noteErr(err)
	info := QueryInfo{SQL: s.text, Args: len(args), Duration: time.Since(start), Err: err}
	if r, ok := res.(result); ok {
		info.Rows = r.ExecResult.RowsAffected
	}
	c.observe(ctx, info)
	return res, err
}

func (s *Stmt) exec(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := s.checkArgs(args); err != nil {
		return nil, err
	}
	switch s.parsed.(type) {
	case *sqlplan.Select, *sqlplan.Compound, *sqlplan.Explain, *sqlplan.ShowDatabases, *sqlplan.ShowTables,
		*sqlplan.ShowPartitions, *sqlplan.ShowIndex, *sqlplan.Describe, *sqlplan.ShowCreateTable, *sqlplan.Call:
		rows, err := s.queryContext(ctx, args)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		dest := make([]driver.Value, len(rows.Columns()))
		for {
			if err := rows.Next(dest); err != nil {
				if err == io.EOF {
					return result{}, nil
				}
				return nil, err
			}
		}
	}
	wargs := s.writeArgs(args)
	res, err := s.run(ctx, wargs)
	clear(wargs) // the values are the caller's, not the statement's to keep
	if err != nil {
		return nil, s.wrapErr(err)
	}
	return result{res}, nil
}

// QueryContext runs the statement and returns its rows. Statements that
// return nothing (DDL, INSERT) run and return an empty result.
func (s *Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	start := time.Now()
	rows, err := s.queryContext(ctx, args)
	if err != nil {
		s.conn.noteErr(err)
		if s.conn.connector.observed() {
			s.conn.connector.observe(ctx, QueryInfo{SQL: s.text, Args: len(args), Duration: time.Since(start), Err: err})
		}
		return nil, err
	}
	s.observeRows(ctx, rows, len(args), start)
	return rows, nil
}

// observeRows reports rows to the connector's observers when it closes.
func (s *Stmt) observeRows(ctx context.Context, rows *Rows, nargs int, start time.Time) {
	c := s.conn.connector
	if !c.observed() {
		return
	}
	text := s.text
	rows.onClose = func(r *Rows) {
		c.observe(ctx, QueryInfo{SQL: text, Args: nargs, Duration: time.Since(start), Rows: r.count, Err: r.err})
	}
}

func (s *Stmt) queryContext(ctx context.Context, args []driver.NamedValue) (*Rows, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := s.checkArgs(args); err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, toArgs(args))
	if err != nil {
		return nil, s.wrapErr(err)
	}
	return rows, nil
}

func (s *Stmt) check(ctx context.Context) error {
	if s.closed {
		return wrapErr(fmt.Errorf("statement is closed: %w", metadata.ErrClosed))
	}
	if err := s.conn.check(); err != nil {
		return err
	}
	return ctx.Err()
}

// checkArgs refuses more or fewer arguments than the statement has
// placeholders. database/sql checks the count only for statements it
// prepared, not for Query and Exec on the connection, which the driver
// parses itself; an ignored argument would run a different statement
// from the one the caller meant, and a missing one fails only where its
// placeholder is bound.
func (s *Stmt) checkArgs(args []driver.NamedValue) error {
	n := s.NumInput()
	if n < 0 || len(args) == n {
		return nil
	}
	return s.wrapErr(fmt.Errorf("statement has %s but is given %s: %w",
		plural(n, "placeholder"), plural(len(args), "argument"), metadata.ErrInvalidValue))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (s *Stmt) converter() *converter {
	return &converter{loc: s.conn.location()}
}

// query runs the statement in the connection's session and returns its
// rows. A SELECT is answered by the statement's kept point lookup when it
// has one that applies (prepared.go).
func (s *Stmt) query(ctx context.Context, args []sqlplan.Arg) (*Rows, error) {
	sel, ok := s.parsed.(*sqlplan.Select)
	if sp, isSp := s.parsed.(*sqlplan.Savepoint); isSp {
		if err := s.conn.savepoint(sp); err != nil {
			return nil, err
		}
		return newRows(ctx, nil, noRows{}, s.converter()), nil
	}
	if !ok {
		if _, write := s.parsed.(*sqlplan.Insert); write {
			if _, err := s.run(ctx, args); err != nil {
				return nil, err
			}
			return newRows(ctx, nil, noRows{}, s.converter()), nil
		}
		sess := s.conn.session()
		res, err := sess.Query(ctx, s.parsed, args)
		s.conn.database = sess.Database
		if err != nil {
			return nil, err
		}
		return newRows(ctx, res.Columns, res, s.converter()), nil
	}
	if rows, ok, err := s.lookupRows(ctx, args); ok {
		return rows, err
	}
	res, err := s.conn.session().Select(ctx, sel, args, func(sp *sqlplan.SelectPlan) { s.prepareLookup(sel, sp) })
	if err != nil {
		return nil, err
	}
	return newRows(ctx, res.Columns, res, s.converter()), nil
}

// run runs a statement that returns no rows in the connection's session.
// An INSERT ... VALUES is bound through the statement's kept binding
// (prepared.go).
func (s *Stmt) run(ctx context.Context, args []sqlplan.Arg) (query.ExecResult, error) {
	if sp, ok := s.parsed.(*sqlplan.Savepoint); ok {
		return query.ExecResult{}, s.conn.savepoint(sp)
	}
	sess := s.conn.session()
	if ins, ok := s.parsed.(*sqlplan.Insert); ok && ins.Select == nil && ins.Compound == nil {
		plan, rows, err := s.bindInsert(ctx, ins, args)
		if err != nil {
			return query.ExecResult{}, err
		}
		return sess.InsertValues(ctx, plan, rows)
	}
	res, err := sess.Run(ctx, s.parsed, args)
	s.conn.database = sess.Database
	return res, err
}

// result is the driver.Result of Exec.
type result struct{ query.ExecResult }

// LastInsertId returns what MySQL's server reports for an INSERT into a
// table with an auto-increment column: the first value the statement
// generated, else the last value it gave the column, else 0. On other
// tables and statements it is an error.
func (r result) LastInsertId() (int64, error) {
	if r.HasLastInsertID {
		return r.LastInsertID, nil
	}
	return 0, wrapErr(fmt.Errorf("LastInsertId needs a table with an auto-increment column: %w", metadata.ErrUnsupported))
}

// RowsAffected counts appended rows, or rows inserted plus rows whose
// stored value changed (a no-op upsert or a delete of a missing key
// counts 0), as the write counted them when Exec ran.
func (r result) RowsAffected() (int64, error) { return r.ExecResult.RowsAffected, nil }

// wrapErr is the package's wrapErr with the error placed in the
// statement's text.
func (s *Stmt) wrapErr(err error) error { return wrapSQLErr(err, s.text) }

// lineColumn turns a byte offset of text into a 1-based line and column.
func lineColumn(text string, pos int) (line, col int) {
	line = 1 + strings.Count(text[:pos], "\n")
	return line, pos - strings.LastIndex(text[:pos], "\n")
}
