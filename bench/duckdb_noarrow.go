//go:build !duckdb_arrow

package main

import "context"

// arrowScan needs duckdb-go's Arrow interface, which is only compiled in
// with the duckdb_arrow build tag.
func (e *duckEngine) arrowScan(context.Context) (int64, error) {
	return 0, na("build the bench with -tags duckdb_arrow")
}
