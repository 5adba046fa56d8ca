package main

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// runPK measures a primary-key table: the upsert rate through prepared
// multi-row statements, a full read after 10% of the keys were updated in
// the log tail past a KV snapshot, and point-lookup latency through a
// prepared statement.
func runPK(n, batch int, dir, syncMode string) error {
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
	if _, err := db.Exec(`CREATE TABLE kv (id BIGINT, k BIGINT, v DOUBLE, s STRING, PRIMARY KEY (id) NOT ENFORCED)
		WITH ('bucket.num' = '4')`); err != nil {
		return err
	}
	prepare := func(rows int) (*sql.Stmt, error) {
		var q strings.Builder
		q.WriteString("INSERT INTO kv VALUES ")
		for i := 0; i < rows; i++ {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?)")
		}
		return db.Prepare(q.String())
	}
	upsert := func(keys []int64, gen int) (time.Duration, error) {
		full, err := prepare(batch)
		if err != nil {
			return 0, err
		}
		defer full.Close()
		args := make([]any, 0, 4*batch)
		start := time.Now()
		for i := 0; i < len(keys); i += batch {
			chunk := keys[i:min(i+batch, len(keys))]
			args = args[:0]
			for _, id := range chunk {
				args = append(args, id, id%1000, float64(id)*0.5+float64(gen), fmt.Sprintf("row-%d-%d", id, gen))
			}
			st := full
			if len(chunk) < batch {
				if st, err = prepare(len(chunk)); err != nil {
					return 0, err
				}
				defer st.Close()
			}
			if _, err := st.Exec(args...); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	all := make([]int64, n)
	for i := range all {
		all[i] = int64(i)
	}
	d, err := upsert(all, 0)
	if err != nil {
		return err
	}
	fmt.Printf("upsert (new keys): %d rows in %v: %.0f rows/s\n", n, d.Round(time.Millisecond), float64(n)/d.Seconds())
	start := time.Now()
	if _, err := db.Exec(`CALL sys.kv_snapshot('kv')`); err != nil {
		return err
	}
	fmt.Printf("kv snapshot: %v\n", time.Since(start).Round(time.Millisecond))
	var tenth []int64
	for i := int64(0); i < int64(n); i += 10 {
		tenth = append(tenth, i)
	}
	d, err = upsert(tenth, 1)
	if err != nil {
		return err
	}
	fmt.Printf("upsert (10%% updates): %d rows in %v: %.0f rows/s\n", len(tenth), d.Round(time.Millisecond), float64(len(tenth))/d.Seconds())

	start = time.Now()
	rows, err := db.Query(`SELECT id, k, v, s FROM kv`)
	if err != nil {
		return err
	}
	var (
		id, k int64
		v     float64
		s     string
		count int
	)
	for rows.Next() {
		if err := rows.Scan(&id, &k, &v, &s); err != nil {
			return err
		}
		count++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	d = time.Since(start)
	if count != n {
		return fmt.Errorf("full read returned %d rows, want %d", count, n)
	}
	fmt.Printf("full read (snapshot + 10%% tail): %d rows in %v: %.0f rows/s\n", count, d.Round(time.Millisecond), float64(count)/d.Seconds())

	lookup, err := db.Prepare(`SELECT v FROM kv WHERE id = ?`)
	if err != nil {
		return err
	}
	defer lookup.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 20000)
	for i := range lat {
		key := rng.Int64N(int64(n))
		t0 := time.Now()
		if err := lookup.QueryRow(key).Scan(&v); err != nil {
			return fmt.Errorf("lookup %d: %w", key, err)
		}
		lat[i] = time.Since(t0)
	}
	slices.Sort(lat)
	fmt.Printf("point lookup: p50 %v p99 %v (%d lookups)\n", lat[len(lat)/2], lat[len(lat)*99/100], len(lat))
	return nil
}
