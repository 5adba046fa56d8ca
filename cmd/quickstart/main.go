// Command quickstart is a tour of fluss in one run: it creates a
// partitioned log table in a fresh directory, writes rows, closes the
// database, reopens it, queries the rows back and prints the query's plan.
//
//	go run ./cmd/quickstart
package main

import (
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/flusslite/fluss"
)

func main() {
	dir, err := os.MkdirTemp("", "fluss-quickstart-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dsn := filepath.Join(dir, "db") + "?default.bucket.number=2"
	if err := run(dsn); err != nil {
		log.Fatal(err)
	}
}

func run(dsn string) error {
	fmt.Println("opening", dsn)
	db, err := sql.Open("fluss", dsn)
	if err != nil {
		return err
	}
	steps := []string{
		`CREATE TABLE orders (
			id BIGINT NOT NULL,
			amount DECIMAL(10, 2),
			customer STRING,
			created TIMESTAMP(3),
			dt DATE NOT NULL
		) PARTITIONED BY (dt) WITH ('bucket.num' = '2', 'bucket.key' = 'id')`,
		`INSERT INTO orders VALUES
			(1, 19.99, 'ada',   '2026-01-01 09:00:00.125', '2026-01-01'),
			(2, 250.00, 'brian', '2026-01-01 10:30:00',    '2026-01-01'),
			(3, 5.10,  NULL,    '2026-01-02 11:15:00',    '2026-01-02')`,
	}
	for _, q := range steps {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(q)[0], err)
		}
	}
	// Parameters bind with ?, :name or $1.
	if _, err := db.Exec(`INSERT INTO orders VALUES (?, ?, ?, ?, ?)`,
		4, "75.50", "chen", time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC), "2026-01-02"); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}

	fmt.Println("reopening")
	db, err = sql.Open("fluss", dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	const q = `SELECT id, amount, customer, created FROM orders WHERE dt = '2026-01-01' OR amount > 50`
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	fmt.Printf("%-4s %-8s %-8s %s\n", "id", "amount", "customer", "created")
	for rows.Next() {
		var id int64
		var amount string
		var customer sql.NullString
		var created time.Time
		if err := rows.Scan(&id, &amount, &customer, &created); err != nil {
			return err
		}
		name := "NULL"
		if customer.Valid {
			name = customer.String
		}
		fmt.Printf("%-4d %-8s %-8s %s\n", id, amount, name, created.Format("2006-01-02 15:04:05.000"))
	}
	if err := rows.Err(); err != nil {
		return err
	}

	fmt.Println("\nEXPLAIN SELECT id FROM orders WHERE dt >= '2026-01-02' AND amount > 50")
	plan, err := db.Query(`EXPLAIN SELECT id FROM orders WHERE dt >= '2026-01-02' AND amount > 50`)
	if err != nil {
		return err
	}
	defer plan.Close()
	for plan.Next() {
		var line string
		if err := plan.Scan(&line); err != nil {
			return err
		}
		fmt.Println("  " + line)
	}
	return plan.Err()
}
