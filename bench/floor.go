package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strconv"
	"time"
)

// The database/sql floor: a driver that does no work at all. Its rows come
// from a small ring of precomputed values of W1's shape, so a W1 scan
// through it measures what database/sql itself costs per row (Next, the
// driver.Value interface boxes, Scan's conversions) and nothing else. No
// driver can scan through database/sql faster than this.

const floorDriverName = "benchfloor"

func init() { sql.Register(floorDriverName, floorDriver{}) }

// floorRing is the number of precomputed rows the floor cycles through;
// small enough to stay in cache, so the floor has no memory traffic of
// its own.
const floorRing = 1024

type floorDriver struct{}

// Open takes the row count as its DSN.
func (floorDriver) Open(dsn string) (driver.Conn, error) {
	n, err := strconv.ParseInt(dsn, 10, 64)
	if err != nil {
		return nil, err
	}
	g := newGen(n)
	ring := make([][]driver.Value, floorRing)
	for i := range ring {
		r := g.at(int64(i), 0)
		ring[i] = []driver.Value{r.id, r.ts, int64(r.k), r.v, r.s}
	}
	return &floorConn{n: n, ring: ring}, nil
}

type floorConn struct {
	n    int64
	ring [][]driver.Value
}

func (c *floorConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("benchfloor: use Query")
}
func (c *floorConn) Close() error              { return nil }
func (c *floorConn) Begin() (driver.Tx, error) { return nil, errors.New("benchfloor: no transactions") }

// QueryContext answers every query with the n rows of W1's shape.
func (c *floorConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &floorRows{c: c}, nil
}

var _ driver.QueryerContext = (*floorConn)(nil)

type floorRows struct {
	c *floorConn
	i int64
}

func (r *floorRows) Columns() []string { return []string{"id", "ts", "k", "v", "s"} }
func (r *floorRows) Close() error      { return nil }
func (r *floorRows) Next(dest []driver.Value) error {
	if r.i == r.c.n {
		return io.EOF
	}
	copy(dest, r.c.ring[r.i%floorRing])
	r.i++
	return nil
}

// floorEngine puts the floor beside the engines in W1; it has nothing but
// a *sql.DB, and is never asked for anything else.
type floorEngine struct{ sqlDB *sql.DB }

func (f floorEngine) name() string       { return colFloor }
func (f floorEngine) db() *sql.DB        { return f.sqlDB }
func (f floorEngine) driverName() string { return floorDriverName }
func (f floorEngine) dsn() string        { return "" }
func (f floorEngine) close() error       { return nil }
func (f floorEngine) load(context.Context, gen, func(string, int64, time.Duration)) (loadStats, error) {
	return loadStats{}, na("the floor holds no data")
}
func (f floorEngine) w2Query(time.Time) (string, []any) { return "", nil }
func (f floorEngine) insert(context.Context, gen, insertSpec) (int64, time.Duration, error) {
	return 0, 0, na("the floor holds no data")
}
func (f floorEngine) appendBulk(context.Context, gen, int) (time.Duration, error) {
	return 0, na("the floor holds no data")
}
func (f floorEngine) arrowScan(context.Context) (int64, error) {
	return 0, na("the floor holds no data")
}
