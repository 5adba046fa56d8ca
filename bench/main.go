// Command bench measures fluss against DuckDB and SQLite on the same
// generated rows, in one run, through database/sql, and prints the median
// of each workload with fluss's ratio to each peer. It also measures the
// database/sql floor: a driver that returns precomputed rows, so that the
// cost of database/sql itself is known in the same run.
//
//	cd bench && go run . -rows 10000000 -out results/
//
// Row i of the data set is a pure function of i (see data.go), so every
// system holds the same rows. The workloads are those of issue 8 (W1..W9
// and W1's peak memory) plus the primary-key and lake-tier figures of
// issues 3 and 4. A feature a system lacks is printed as "n/a" with the
// reason, never estimated.
//
// It lives in its own module so that the peers measured beside fluss (both
// need cgo) do not weigh on the main module.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	_ "github.com/flusslite/fluss"
)

// config is the command line.
type config struct {
	rows       int64
	runs       int
	out        string
	dir        string
	lookups    int
	joinKeys   int
	joinRows   int64
	insertRows int
	arrowRows  int
	insertTime time.Duration
	lookupTime time.Duration
	txnTime    time.Duration
	streamTime time.Duration
	idleTime   time.Duration
	rssSizes   []int64
	only       map[string]bool
}

func main() {
	var (
		cfg        config
		rssList    string
		only       string
		cpuProfile string
		childDrv   string
		childDSN   string
	)
	flag.Int64Var(&cfg.rows, "rows", 10_000_000, "rows of the data set")
	flag.IntVar(&cfg.runs, "runs", 3, "times each workload runs; the table shows the median")
	flag.StringVar(&cfg.out, "out", "", "directory for results.csv, bars.csv, machine.txt and ratios.png (none: print only)")
	flag.StringVar(&cfg.dir, "dir", "", "directory for the databases (default: a temporary directory, removed afterwards)")
	flag.IntVar(&cfg.lookups, "lookups", 10_000, "point lookups per W6 run")
	flag.IntVar(&cfg.joinKeys, "join-keys", 10_000, "J2's probe keys into kv (at most -rows)")
	flag.Int64Var(&cfg.joinRows, "join-rows", 0, "rows of J1's fact table f; f10 and d1 follow it (0: -rows)")
	flag.IntVar(&cfg.insertRows, "insert-rows", 100_000, "rows per W7 run (at most -rows)")
	flag.IntVar(&cfg.arrowRows, "arrow-rows", 2_000_000, "rows per W7d run, AppendArrow of ready records (at most -rows)")
	flag.DurationVar(&cfg.insertTime, "insert-time", time.Second, "a W7 run stops after the statement that passes this")
	flag.DurationVar(&cfg.lookupTime, "lookup-time", 500*time.Millisecond, "a W6 run stops after this, once it has 1,000 lookups")
	flag.DurationVar(&cfg.txnTime, "txn-time", time.Second, "how long each T1 run moves money")
	flag.DurationVar(&cfg.streamTime, "stream-time", 2*time.Second, "how long each S1 run writes, at 1,000 INSERTs a second")
	flag.DurationVar(&cfg.idleTime, "idle-time", 10*time.Second, "how long SIDLEbase and SIDLE each measure the idle process")
	flag.StringVar(&rssList, "rss", "1000000,10000000", "row counts at which W1's peak RSS is measured (those above -rows are skipped; -rows itself always is)")
	flag.StringVar(&only, "only", "", "comma-separated workloads to run (W1,...,W9,T2,RSS,J1,J2,J3,J1MEM,T1,S1,S2,S3,SIDLE); default all")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	flag.StringVar(&childDrv, "child-driver", "", "internal: run W1 once on this driver and exit (peak RSS measurement)")
	flag.StringVar(&childDSN, "child-dsn", "", "internal: the DSN of -child-driver")
	flag.Parse()

	if childDrv != "" {
		if err := runChild(childDrv, childDSN, cfg.rows); err != nil {
			log.Fatal(err)
		}
		return
	}
	if cfg.joinRows != 0 && cfg.joinRows < 1000 {
		log.Fatal("-join-rows must be at least 1000 (or 0: -rows)")
	}
	if cfg.streamTime < 100*time.Millisecond || cfg.idleTime < time.Second {
		log.Fatal("-stream-time must be at least 100ms and -idle-time at least 1s")
	}
	if cfg.rows < 1000 || cfg.runs < 1 || cfg.lookups < 1 || cfg.joinKeys < 1 || cfg.insertRows < 1 || cfg.arrowRows < 1 {
		log.Fatal("-rows must be at least 1000; -runs, -lookups, -join-keys, -insert-rows and -arrow-rows at least 1")
	}
	for _, f := range strings.Split(rssList, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 1000 {
			log.Fatalf("-rss: bad row count %q", f)
		}
		cfg.rssSizes = append(cfg.rssSizes, n)
	}
	if only != "" {
		cfg.only = map[string]bool{}
		for _, w := range strings.Split(only, ",") {
			cfg.only[strings.ToUpper(strings.TrimSpace(w))] = true
		}
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
	}
	err := run(context.Background(), cfg)
	pprof.StopCPUProfile()
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cfg config) error {
	dir := cfg.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "fluss-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	h, err := newHarness(ctx, cfg, dir)
	if err != nil {
		return err
	}
	runErr := h.runAll(ctx)
	closeErr := h.close()
	if runErr == nil && closeErr == nil && h.want("RSS") {
		runErr = h.measureRSS(ctx)
	}
	h.report(os.Stdout)
	if cfg.out != "" {
		if err := h.write(cfg.out); err != nil {
			return err
		}
		fmt.Printf("\nwrote %s\n", filepath.Join(cfg.out, "{results.csv,bars.csv,machine.txt,ratios.png}"))
	}
	if runErr != nil {
		return runErr
	}
	if closeErr != nil {
		return closeErr
	}
	if h.failed {
		return fmt.Errorf("some measurements failed (see the notes above)")
	}
	return nil
}
