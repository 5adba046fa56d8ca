// Package fluss is an embedded database with the semantics of Apache Fluss,
// opened through database/sql as the driver "fluss":
//
//	db, err := sql.Open("fluss", "/var/lib/app/fluss?default.bucket.number=4")
//
// The DSN is a directory path, a file: URI or ":memory:", with ?key=value
// options (see ParseDSN). All connections of one *sql.DB share one engine;
// opening the same directory again in the same process shares its engine
// too (with the same engine options, or ErrInvalidOption says which
// differ), and another process gets ErrLocked.
//
// This package is the database/sql face only; the engine lives in the
// packages below it (see the README's "Reading the source").
package fluss

import (
	"context"
	"database/sql"
	"database/sql/driver"
)

// DriverName is the name the driver registers with database/sql.
const DriverName = "fluss"

func init() {
	sql.Register(DriverName, &Driver{})
}

// Driver is the database/sql driver. It is safe for concurrent use.
type Driver struct{}

var (
	_ driver.Driver        = (*Driver)(nil)
	_ driver.DriverContext = (*Driver)(nil)
)

// Open opens a connection that owns an engine reference of its own; it is
// released when the connection closes. database/sql uses OpenConnector
// instead, so that all connections of a *sql.DB share one engine.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	c, err := NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	conn, err := c.Connect(context.Background())
	if err != nil {
		c.Close()
		return nil, err
	}
	conn.(*Conn).ownsConnector = true
	return conn, nil
}

// OpenConnector parses the DSN and opens (or shares) its engine.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return NewConnector(dsn)
}
