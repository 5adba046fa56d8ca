package fluss

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
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
	case int64, float64, bool, string, []byte, time.Time, nil:
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
		return s.exec(ctx, args)
	}
	start := time.Now()
	res, err := s.exec(ctx, args)
	info := QueryInfo{SQL: s.text, Args: len(args), Duration: time.Since(start), Err: err}
	if r, ok := res.(result); ok {
		info.Rows = r.rowsAffected
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
	switch st := s.parsed.(type) {
	case *sqlplan.Insert, *sqlplan.Update, *sqlplan.Delete:
		wargs := s.writeArgs(args)
		res, err := s.write(ctx, wargs)
		clear(wargs) // the values are the caller's, not the statement's to keep
		if err != nil {
			return nil, s.wrapErr(err)
		}
		return res, nil
	case *sqlplan.CreateTableAs:
		res, err := s.createTableAs(ctx, st, toArgs(args))
		if err != nil {
			return nil, s.wrapErr(err)
		}
		return res, nil
	case *sqlplan.Select, *sqlplan.Compound, *sqlplan.Explain, *sqlplan.ShowDatabases, *sqlplan.ShowTables,
		*sqlplan.ShowPartitions, *sqlplan.Describe, *sqlplan.ShowCreateTable, *sqlplan.Call:
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
	if err := s.execDDL(ctx); err != nil {
		return nil, s.wrapErr(err)
	}
	return result{}, nil
}

// QueryContext runs the statement and returns its rows. Statements that
// return nothing (DDL, INSERT) run and return an empty result.
func (s *Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	start := time.Now()
	rows, err := s.queryContext(ctx, args)
	if err != nil {
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

// checkArgs refuses arguments that no placeholder takes. database/sql
// checks a count only for statements it prepared, not for Query and Exec
// on the connection, which the driver parses itself; an ignored argument
// would run a different statement from the one the caller meant.
func (s *Stmt) checkArgs(args []driver.NamedValue) error {
	n := s.NumInput()
	if n < 0 || len(args) <= n {
		return nil
	}
	return s.wrapErr(fmt.Errorf("statement has %s but %s were given: %w",
		plural(n, "placeholder"), plural(len(args), "argument"), metadata.ErrInvalidValue))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (s *Stmt) engine() *storage.Engine { return s.conn.connector.shared.engine }

func (s *Stmt) lake() *lake.Lake { return s.conn.connector.shared.lake }

func (s *Stmt) converter() *converter {
	return &converter{loc: s.conn.connector.cfg.Location}
}

// path fills in the current database of an unqualified table name.
func (s *Stmt) path(p metadata.TablePath) metadata.TablePath {
	if p.Database == "" {
		p.Database = s.conn.database
	}
	return p
}

func (s *Stmt) query(ctx context.Context, args []sqlplan.Arg) (*Rows, error) {
	eng := s.engine()
	switch st := s.parsed.(type) {
	case *sqlplan.Select:
		return s.selectRows(ctx, st, args)
	case *sqlplan.Compound:
		return s.compoundRows(ctx, st, args)
	case *sqlplan.Explain:
		lines, err := s.explainLines(ctx, st, args)
		if err != nil {
			return nil, err
		}
		rows := make([][]any, len(lines))
		for i, l := range lines {
			rows[i] = []any{l}
		}
		return s.static(ctx, []resultColumn{{name: "plan", typ: metadata.StringType()}}, rows)
	case *sqlplan.ShowDatabases:
		dbs, err := eng.ListDatabases(ctx)
		if err != nil {
			return nil, err
		}
		return s.static(ctx, []resultColumn{{name: "database_name", typ: metadata.StringType()}}, column(dbs))
	case *sqlplan.ShowTables:
		db := st.Database
		if db == "" {
			db = s.conn.database
		}
		tables, err := s.showTables(ctx, db)
		if err != nil {
			return nil, err
		}
		return s.static(ctx, []resultColumn{{name: "table_name", typ: metadata.StringType()}}, column(tables))
	case *sqlplan.ShowPartitions:
		return s.showPartitions(ctx, s.path(st.Table))
	case *sqlplan.Describe:
		rows, err := s.describe(ctx, s.path(st.Table))
		if isViewErr(err) {
			return s.describeView(ctx, s.path(st.Table))
		}
		return rows, err
	case *sqlplan.ShowCreateTable:
		if st.View {
			return s.showCreateView(ctx, s.path(st.Table))
		}
		rows, err := s.showCreateTable(ctx, s.path(st.Table))
		if isViewErr(err) {
			return s.showCreateView(ctx, s.path(st.Table))
		}
		return rows, err
	case *sqlplan.CreateTableAs:
		if _, err := s.createTableAs(ctx, st, args); err != nil {
			return nil, err
		}
		return s.static(ctx, nil, nil)
	case *sqlplan.Call:
		return s.call(ctx, st, args)
	case *sqlplan.Insert, *sqlplan.Update, *sqlplan.Delete:
		if _, err := s.write(ctx, args); err != nil {
			return nil, err
		}
		return s.static(ctx, nil, nil)
	}
	if err := s.execDDL(ctx); err != nil {
		return nil, err
	}
	return s.static(ctx, nil, nil)
}

// write runs INSERT, UPDATE or DELETE, or buffers it in the connection's
// transaction, and returns its result.
func (s *Stmt) write(ctx context.Context, args []sqlplan.Arg) (result, error) {
	var (
		n   int64
		err error
	)
	switch st := s.parsed.(type) {
	case *sqlplan.Insert:
		return s.insert(ctx, st, args)
	case *sqlplan.Update:
		n, err = s.update(ctx, st, args)
	case *sqlplan.Delete:
		n, err = s.delete(ctx, st, args)
	default:
		err = fmt.Errorf("statement %T is not a write: %w", s.parsed, metadata.ErrUnsupported)
	}
	return result{rowsAffected: n}, err
}

// execDDL runs a statement that returns no rows.
func (s *Stmt) execDDL(ctx context.Context) error {
	eng := s.engine()
	if _, use := s.parsed.(*sqlplan.Use); !use {
		if err := s.conn.checkTxStatement("DDL"); err != nil {
			return err
		}
	}
	switch st := s.parsed.(type) {
	case *sqlplan.CreateDatabase:
		return eng.CreateDatabase(ctx, st.Name, st.IfNotExists)
	case *sqlplan.DropDatabase:
		if err := eng.DropDatabase(ctx, st.Name, st.IfExists, st.Cascade); err != nil {
			return err
		}
		if strings.EqualFold(st.Name, s.conn.database) {
			s.conn.database = metadata.DefaultDatabase
		}
		// The engine forgot the tables; their lake files go with them.
		return s.conn.connector.shared.tiering.RemoveDroppedLakes(context.WithoutCancel(ctx))
	case *sqlplan.CreateTable:
		desc := st.Table
		desc.Path = s.path(desc.Path)
		if _, err := eng.CreateTable(ctx, desc, st.IfNotExists); err != nil {
			return err
		}
		// Clauses of the MySQL dialect that have no effect here (secondary
		// indexes, ENGINE, ...) are said once, to the connector's logger.
		if l := s.conn.connector.logger; l != nil {
			for _, n := range st.Notes {
				l.InfoContext(ctx, "CREATE TABLE: "+n, "table", desc.Path.String())
			}
		}
		return nil
	case *sqlplan.CreateView:
		return s.createView(ctx, st)
	case *sqlplan.DropView:
		return s.dropView(ctx, st)
	case *sqlplan.DropTable:
		if err := eng.DropTable(ctx, s.path(st.Table), st.IfExists); err != nil {
			return err
		}
		// The engine forgot the table; its lake files go with it.
		return s.conn.connector.shared.tiering.RemoveDroppedLakes(context.WithoutCancel(ctx))
	case *sqlplan.AddPartition:
		_, err := eng.CreatePartition(ctx, s.path(st.Table), specMap(st.Spec), st.IfNotExists)
		return err
	case *sqlplan.DropPartition:
		return eng.DropPartition(ctx, s.path(st.Table), specMap(st.Spec), st.IfExists)
	case *sqlplan.SetOptions:
		_, err := eng.AlterTable(ctx, s.path(st.Table), st.Options)
		return err
	case *sqlplan.AddColumn:
		return fmt.Errorf("ALTER TABLE ... ADD COLUMN is not supported yet: %w", metadata.ErrUnsupported)
	case *sqlplan.Use:
		dbs, err := eng.ListDatabases(ctx)
		if err != nil {
			return err
		}
		for _, d := range dbs {
			if strings.EqualFold(d, st.Database) {
				s.conn.database = d
				return nil
			}
		}
		return fmt.Errorf("database %s does not exist: %w", st.Database, metadata.ErrNotFound)
	}
	return fmt.Errorf("statement %T: %w", s.parsed, metadata.ErrUnsupported)
}

func specMap(spec []sqlplan.PartitionValue) map[string]string {
	m := make(map[string]string, len(spec))
	for _, kv := range spec {
		m[kv.Key] = kv.Value
	}
	return m
}

func column(values []string) [][]any {
	rows := make([][]any, len(values))
	for i, v := range values {
		rows[i] = []any{v}
	}
	return rows
}

// wrapErr is the package's wrapErr with the error placed in the
// statement's text.
func (s *Stmt) wrapErr(err error) error { return wrapSQLErr(err, s.text) }

// lineColumn turns a byte offset of text into a 1-based line and column.
func lineColumn(text string, pos int) (line, col int) {
	line = 1 + strings.Count(text[:pos], "\n")
	return line, pos - strings.LastIndex(text[:pos], "\n")
}
