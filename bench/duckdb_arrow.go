//go:build duckdb_arrow

package main

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/duckdb/duckdb-go/v2"
)

// arrowScan reads t through duckdb-go's Arrow interface.
func (e *duckEngine) arrowScan(ctx context.Context) (int64, error) {
	conn, err := e.sqlDB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var n int64
	err = conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("duckdb connection is a %T", dc)
		}
		a, err := duckdb.NewArrowFromConn(dconn)
		if err != nil {
			return err
		}
		rr, err := a.QueryContext(ctx, w1Query)
		if err != nil {
			return err
		}
		defer rr.Release()
		for rr.Next() {
			n += rr.RecordBatch().NumRows()
		}
		return rr.Err()
	})
	return n, err
}
