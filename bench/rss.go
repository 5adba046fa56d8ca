package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Peak memory is measured in a child process per figure: the bench binary
// re-executes itself with -child-driver, the child opens the database,
// runs W1 once and exits, and the parent reads the child's peak resident
// set size. A fresh process is the only way to get a peak that belongs to
// W1 alone.
//
// On Linux the child's rusage (ru_maxrss) is useless here: Go starts a
// child with vfork semantics, and execve keeps the larger of the old and
// new address spaces' peaks, so every child would report at least the
// parent's RSS at the time it was started. The child therefore reads its
// own VmHWM (the peak of the address space exec gave it) from
// /proc/self/status and prints it; rusage is the fallback elsewhere.

// peakPrefix starts the line on which the child reports its VmHWM in KiB.
const peakPrefix = "child-peak-rss-kib "

// runChild is the child's side: one W1 scan, checked.
func runChild(driverName, dsn string, rows int64) error {
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	n, _, err := scanAll(context.Background(), db, w1Query)
	if err != nil {
		return err
	}
	if n != rows {
		return fmt.Errorf("child W1 on %s read %d rows, want %d", driverName, n, rows)
	}
	if kb, ok := vmHWM(); ok {
		fmt.Printf("%s%d\n", peakPrefix, kb)
	}
	return nil
}

// vmHWM reads this process's peak RSS in KiB from /proc/self/status.
func vmHWM() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return 0, false
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// childRSS runs one child and returns its peak RSS in MiB.
func childRSS(ctx context.Context, driverName, dsn string, rows int64) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, self, "-child-driver", driverName, "-child-dsn", dsn, "-rows", fmt.Sprint(rows))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("child W1 on %s: %w", driverName, err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(l, peakPrefix); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("child W1 on %s: bad peak %q", driverName, l)
			}
			return float64(kb) / 1024, nil
		}
	}
	kb, err := maxRSSKiB(cmd.ProcessState)
	if err != nil {
		return 0, err
	}
	return float64(kb) / 1024, nil
}

// measureRSS measures W1's peak RSS of every engine at -rows, and of fluss
// also at each -rss size below -rows, on a table loaded for it. The
// engines must be closed: fluss locks its directory against other
// processes.
func (h *harness) measureRSS(ctx context.Context) error {
	sizes := []int64{h.g.n}
	for _, s := range h.cfg.rssSizes {
		if s < h.g.n && !slices.Contains(sizes, s) {
			sizes = append(sizes, s)
		}
	}
	slices.Sort(sizes)
	for _, s := range h.cfg.rssSizes {
		if s > h.g.n {
			fmt.Printf("W1 peak RSS at %d rows: skipped, above -rows\n", s)
		}
	}
	for _, s := range sizes {
		r := h.res(fmt.Sprintf("RSS@%d", s), fmt.Sprintf("W1 peak RSS at %d rows (child process)", s), "MiB", false)
		if s == h.g.n {
			for _, e := range h.engines {
				for run := 0; run < h.cfg.runs; run++ {
					v, err := childRSS(ctx, e.driverName(), e.dsn(), s)
					h.record(r, e.name(), v, err)
				}
			}
		} else {
			dir := filepath.Join(h.dir, fmt.Sprintf("fluss-rss-%d", s))
			if err := loadFlussT(ctx, dir, s); err != nil {
				return fmt.Errorf("load fluss for the RSS at %d rows: %w", s, err)
			}
			for run := 0; run < h.cfg.runs; run++ {
				v, err := childRSS(ctx, "fluss", dir+flussDSNOptions, s)
				h.record(r, colFluss, v, err)
			}
			r.notes[colDuck], r.notes[colSQLite] = "-", "-"
		}
		for _, c := range []string{colFluss, colDuck, colSQLite} {
			if m, ok := r.median(c); ok {
				fmt.Printf("  RSS %-8s %d rows: %s\n", c, s, format(m, "MiB"))
			}
		}
	}
	return nil
}

// loadFlussT creates a fluss database in dir holding table t of n rows.
func loadFlussT(ctx context.Context, dir string, n int64) error {
	e, err := openFluss(dir)
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := e.sqlDB.ExecContext(ctx, `CREATE TABLE t (`+flussColumns+`) WITH ('bucket.num' = '4')`); err != nil {
		return errors.Join(err, e.close())
	}
	g := newGen(n)
	if err := e.appendArrow(ctx, "t", false, 0, n, g.row0); err != nil {
		return errors.Join(err, e.close())
	}
	fmt.Printf("  loaded %d rows into fluss for the RSS figure in %v\n", n, time.Since(start).Round(time.Millisecond))
	return e.close()
}
