// Command bench measures fluss through database/sql: it writes rows
// (BIGINT, BIGINT, DOUBLE, STRING) into a 4-bucket log table with
// prepared multi-row INSERTs, then scans every row back with Query and
// Scan, and prints rows per second for both.
//
//	go run . -rows 10000000
//
// It lives in its own module so that the peers later measured beside
// fluss do not weigh on the main module.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	_ "github.com/flusslite/fluss"
)

func main() {
	rows := flag.Int("rows", 10_000_000, "rows to write and read")
	batch := flag.Int("batch", 1000, "rows per INSERT statement")
	dir := flag.String("dir", "", "data directory (default: a fresh temporary directory)")
	syncMode := flag.String("sync", "on", "DSN sync option: on or off")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	workload := flag.String("workload", "log", "log: append and scan a log table; pk: upsert, read and look up a primary-key table")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	runFn := run
	if *workload == "pk" {
		runFn = runPK
	}
	if err := runFn(*rows, *batch, *dir, *syncMode); err != nil {
		pprof.StopCPUProfile()
		log.Fatal(err)
	}
}

func run(n, batch int, dir, syncMode string) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "fluss-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "db")
	}
	db, err := sql.Open("fluss", dir+"?sync="+syncMode)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE bench (id BIGINT, k BIGINT, v DOUBLE, s STRING) WITH ('bucket.num' = '4')`); err != nil {
		return err
	}

	insert := func(rows int) (*sql.Stmt, error) {
		var q strings.Builder
		q.WriteString("INSERT INTO bench VALUES ")
		for i := 0; i < rows; i++ {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?)")
		}
		return db.Prepare(q.String())
	}
	full, err := insert(batch)
	if err != nil {
		return err
	}
	defer full.Close()
	args := make([]any, 0, 4*batch)
	start := time.Now()
	for written := 0; written < n; {
		m := min(batch, n-written)
		args = args[:0]
		for i := written; i < written+m; i++ {
			args = append(args, int64(i), int64(i%1000), float64(i)*0.5, fmt.Sprintf("row-%d", i))
		}
		st := full
		if m < batch {
			if st, err = insert(m); err != nil {
				return err
			}
		}
		if _, err := st.Exec(args...); err != nil {
			return err
		}
		written += m
	}
	insertDur := time.Since(start)
	fmt.Printf("insert: %d rows in %v: %.0f rows/s (%d rows per statement, sync=%s)\n",
		n, insertDur.Round(time.Millisecond), float64(n)/insertDur.Seconds(), batch, syncMode)

	start = time.Now()
	rs, err := db.Query(`SELECT id, k, v, s FROM bench`)
	if err != nil {
		return err
	}
	var (
		id, k int64
		v     float64
		s     string
		count int
		sum   int64
	)
	for rs.Next() {
		if err := rs.Scan(&id, &k, &v, &s); err != nil {
			return err
		}
		count++
		sum += id
	}
	if err := rs.Err(); err != nil {
		return err
	}
	scanDur := time.Since(start)
	if count != n || sum != int64(n)*int64(n-1)/2 {
		return fmt.Errorf("scan read %d rows (id sum %d), want %d rows", count, sum, n)
	}
	fmt.Printf("scan:   %d rows in %v: %.0f rows/s\n", count, scanDur.Round(time.Millisecond), float64(count)/scanDur.Seconds())
	return nil
}
