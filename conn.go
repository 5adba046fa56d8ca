package fluss

import (
	"context"
	"database/sql/driver"
	"math/big"
	"reflect"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/query"
	"github.com/flusslite/fluss/storage"
)

// Conn is one connection. Like every database/sql connection it is used by
// one goroutine at a time; the engine under it is shared and safe for
// concurrent use.
type Conn struct {
	connector *Connector
	// ownsConnector is set for connections made by Driver.Open, which
	// release their own engine reference on Close.
	ownsConnector bool
	// database is the current database (USE d).
	database string
	closed   bool
	// tx is the open transaction (tx.go), nil outside one.
	tx *Tx
	// vars are the session variables SET changes (SET time_zone moves
	// loc); they last as long as the connection, as in MySQL.
	vars *query.Variables
	// lookups keeps the point-lookup bindings (prepared.go) of the
	// statements run on the connection, by their text, so that a SELECT
	// run again through Query, not a prepared statement, keeps its
	// binding too. A kept binding holds scratch buffers: it is the
	// connection's, never shared with another.
	lookups map[string]*preparedLookup
	// kept keeps the bindings the query layer keeps for the connection's
	// statements (query.Kept).
	kept query.Kept
}

// maxKeptLookups bounds Conn.lookups; past it the map starts over.
const maxKeptLookups = 256

var (
	_ driver.Conn               = (*Conn)(nil)
	_ driver.ConnPrepareContext = (*Conn)(nil)
	_ driver.QueryerContext     = (*Conn)(nil)
	_ driver.ExecerContext      = (*Conn)(nil)
	_ driver.ConnBeginTx        = (*Conn)(nil)
	_ driver.Pinger             = (*Conn)(nil)
	_ driver.SessionResetter    = (*Conn)(nil)
	_ driver.Validator          = (*Conn)(nil)
	_ driver.NamedValueChecker  = (*Conn)(nil)
)

func newConn(c *Connector) *Conn {
	return &Conn{connector: c, database: metadata.DefaultDatabase, vars: query.NewVariables(c.cfg.Location)}
}

// Prepare parses query into a statement.
func (c *Conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext parses query into a statement, or takes the parsed form
// from the connector's statement cache. The statement is bound to its
// arguments and the catalog each time it runs.
func (c *Conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	st, err := c.connector.stmts.parse(query)
	if err != nil {
		err = wrapSQLErr(err, query)
		c.noteErr(err)
		return nil, err
	}
	return &Stmt{conn: c, text: query, parsed: st, prepLookup: c.lookups[query]}, nil
}

// keepLookup remembers the point-lookup binding of the statement text.
func (c *Conn) keepLookup(text string, pl *preparedLookup) {
	if c.lookups == nil || len(c.lookups) >= maxKeptLookups {
		c.lookups = map[string]*preparedLookup{}
	}
	c.lookups[text] = pl
}

// QueryContext parses and runs a query.
func (c *Conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.(*Stmt).QueryContext(ctx, args)
}

// ExecContext parses and runs a statement.
func (c *Conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	st, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.(*Stmt).ExecContext(ctx, args)
}

// Begin is BeginTx with default options.
func (c *Conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// Ping reports whether the engine is open.
func (c *Conn) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.closed || c.connector.shared.isClosed() {
		return driver.ErrBadConn
	}
	return nil
}

// ResetSession returns the connection to the pool's default state: the
// current database goes back to the default, and a transaction still
// open is rolled back. database/sql resets a connection only between
// uses, never inside a *sql.Tx: a transaction left open here is one it no
// longer knows of, and its writes must not join the next user's
// statements and commit with them. Session variables (SET) stay, as a
// MySQL connection's do when database/sql reuses it.
func (c *Conn) ResetSession(ctx context.Context) error {
	if c.closed || c.connector.shared.isClosed() {
		return driver.ErrBadConn
	}
	c.database = metadata.DefaultDatabase
	if c.tx != nil {
		if err := c.tx.end(); err != nil {
			return driver.ErrBadConn
		}
	}
	return nil
}

// IsValid reports whether the connection may be reused.
func (c *Conn) IsValid() bool {
	return !c.closed && !c.connector.shared.isClosed()
}

// Close closes the connection. Idempotent.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	var err error
	if c.tx != nil {
		// An open transaction is rolled back: its writes were only
		// buffered.
		err = c.tx.end()
	}
	if c.ownsConnector {
		if cerr := c.connector.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// session is the session a statement of the connection runs in: the
// shared engine, lake and tiering service, the handle's options, the
// current database and, inside a transaction, its read view and write
// buffer.
func (c *Conn) session() *query.Session {
	cfg := c.connector.cfg
	se := c.connector.shared
	s := query.Session{
		Engine:             se.engine,
		Lake:               se.lake,
		Tiering:            se.tiering,
		Database:           c.database,
		MemoryLimit:        cfg.MemoryLimit,
		MaxRecordsPerSplit: cfg.MaxRecordsPerSplit,
		Threads:            cfg.Threads,
		Logger:             c.connector.logger,
		Vars:               c.vars,
		Location:           c.location(),
		Kept:               &c.kept,
	}
	if c.tx != nil {
		s.View, s.Writes = c.tx.view, c.tx.buf
	}
	return query.NewSession(s)
}

func (c *Conn) engine() *storage.Engine { return c.connector.shared.engine }

func (c *Conn) check() error {
	if c.closed {
		return driver.ErrBadConn
	}
	if c.connector.shared.isClosed() {
		return wrapErr(metadata.ErrClosed)
	}
	return nil
}

// location is the connection's loc: the DSN's, or the zone SET
// time_zone named (UTC for a connection without a connector).
func (c *Conn) location() *time.Location {
	switch {
	case c == nil:
		return time.UTC
	case c.vars != nil && c.vars.Location != nil:
		return c.vars.Location
	case c.connector == nil || c.connector.cfg.Location == nil:
		return time.UTC
	}
	return c.connector.cfg.Location
}

// CheckNamedValue accepts what database/sql's default converter accepts,
// plus the values fluss binds natively: uint64 over MaxInt64, *big.Int,
// slices and maps for ARRAY and MAP (and []any for ROW), and metadata's
// canonical values. A time.Time, also one a driver.Valuer returns, is
// moved into the connection's loc (the DSN's, or SET time_zone's), as
// go-sql-driver/mysql converts it: a
// TIMESTAMP, DATE or TIME takes its wall clock there, and a
// TIMESTAMP_LTZ keeps its instant either way.
func (c *Conn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case uint64, *big.Int, metadata.DecimalValue, metadata.DateValue, metadata.TimeValue, metadata.MapValue:
		return nil
	case time.Time:
		nv.Value = v.In(c.location())
		return nil
	case []byte, string, nil:
		return nil
	case driver.Valuer:
		_ = v
	default:
		rv := reflect.ValueOf(nv.Value)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			return nil
		}
	}
	conv, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return err
	}
	if t, ok := conv.(time.Time); ok {
		conv = t.In(c.location())
	}
	nv.Value = conv
	return nil
}
