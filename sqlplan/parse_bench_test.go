package sqlplan

import (
	"strings"
	"testing"
)

// BenchmarkParse measures Parse on the statement shapes a service sends
// most: a point query with placeholders, a filtered scan with a LIKE
// escape and ALL, a multi-row INSERT, and DDL.
func BenchmarkParse(b *testing.B) {
	values := strings.TrimSuffix(strings.Repeat("(?, ?, 'x\\_y'), ", 100), ", ")
	cases := []struct{ name, sql string }{
		{"point", "SELECT id, name, email FROM users WHERE id = ?"},
		{"scan", "SELECT ALL region, COUNT(ALL amount) FROM orders WHERE note LIKE 'a\\_%' AND ts >= $1 AND ts < $2 GROUP BY region ORDER BY region LIMIT 10"},
		{"insert100", "INSERT INTO t (a, b, c) VALUES " + values},
		{"explain", "EXPLAIN SELECT a FROM t WHERE b = 1"},
		{"ddl", "CREATE TABLE IF NOT EXISTS orders (id BIGINT, region STRING, amount DECIMAL(10, 2), PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '4')"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(c.sql); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
