package main

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
)

// format prints a figure in its unit.
func format(v float64, unit string) string {
	switch unit {
	case "rows/s", "rows", "tx/s":
		return fmt.Sprintf("%.0f %s", v, unit)
	case "µs":
		return fmt.Sprintf("%.1f µs", v)
	case "MiB":
		return fmt.Sprintf("%.0f MiB", v)
	case "ms/s":
		return fmt.Sprintf("%.3f ms/s", v)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// ratio is fluss's cost over the peer's: time over time, or rate under
// rate. Below 1 fluss is faster. ok is false when either is missing or
// the row is not a cost (the lake check).
func ratio(r *result, peer string) (float64, bool) {
	if r.unit == "rows" {
		return 0, false
	}
	f, ok1 := r.median(colFluss)
	p, ok2 := r.median(peer)
	if !ok1 || !ok2 || f <= 0 || p <= 0 {
		return 0, false
	}
	if r.higher {
		return p / f, true
	}
	return f / p, true
}

// cell is a column's text in the table: the median, or the note's first
// word ("n/a", "error", "-").
func cell(r *result, c string) string {
	if m, ok := r.median(c); ok {
		return strconv.FormatFloat(m, 'f', decimals(r.unit), 64)
	}
	note := r.notes[c]
	if note == "" {
		return "-"
	}
	w, _, _ := strings.Cut(note, ":")
	return w
}

func decimals(unit string) int {
	switch unit {
	case "µs", "ms":
		return 1
	case "ms/s":
		return 3
	}
	return 0
}

func ratioText(r *result, peer string) string {
	if x, ok := ratio(r, peer); ok {
		return fmt.Sprintf("%.2f", x)
	}
	return "-"
}

// report prints the table of medians, the bars and the notes.
func (h *harness) report(w io.Writer) {
	fmt.Fprintf(w, "\nmedians of %d runs (load, upsert, tier and lake: one), %d rows; ratio = fluss's cost / the peer's (time, or 1/rate): below 1 fluss is faster\n\n", h.cfg.runs, h.g.n)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tunit\tfluss\tDuckDB\tSQLite\tfloor\tfluss/DuckDB\tfluss/SQLite\t")
	for _, r := range h.results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.id, r.unit,
			cell(r, colFluss), cell(r, colDuck), cell(r, colSQLite), cell(r, colFloor),
			ratioText(r, colDuck), ratioText(r, colSQLite))
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range h.results {
		fmt.Fprintf(w, "%-7s %s\n", r.id, r.title)
	}
	fmt.Fprintln(w, "\nbars (issues 8, 16, 17 and 18), from this run's medians:")
	for _, b := range h.bars() {
		fmt.Fprintf(w, "  %-6s %-58s %s\n", b.status, b.name, b.detail)
	}
	var notes []string
	for _, r := range h.results {
		for _, c := range columns {
			if n := r.notes[c]; n != "" && n != "-" {
				notes = append(notes, fmt.Sprintf("  %s %s: %s", r.id, c, n))
			}
		}
	}
	if h.streams {
		notes = append(notes, "  "+noSubscriptions)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		fmt.Fprintln(w, strings.Join(notes, "\n"))
	}
}

// bar is one of the performance bars of issues 8, 16, 17 and 18, judged on this run.
type bar struct {
	name, status, detail string
}

func (h *harness) bars() []bar {
	get := func(id, c string) (float64, bool) {
		r, ok := h.byID[id]
		if !ok {
			return 0, false
		}
		return r.median(c)
	}
	var out []bar
	check := func(name string, a, b float64, okA, okB bool, limit float64, atMost bool, what string) {
		out = append(out, judge(name, a, b, okA, okB, limit, atMost, what))
	}
	w1, okW1 := get("W1", colFluss)
	floor, okFloor := get("W1", colFloor)
	check("W1 within 1.25x the database/sql floor", w1, floor, okW1, okFloor, 1.25, true, "fluss/floor")
	d1, okD1 := get("W1", colDuck)
	check("W1 faster than DuckDB through database/sql", w1, d1, okW1, okD1, 1, true, "fluss/DuckDB")
	w2, ok2 := get("W2", colFluss)
	check("W2 at most 3% of W1", w2, w1, ok2, okW1, 0.03, true, "W2/W1")
	w3, ok3 := get("W3", colFluss)
	check("W3 at most 10% of W1", w3, w1, ok3, okW1, 0.10, true, "W3/W1")
	w4, ok4 := get("W4", colFluss)
	check("W4 at most 1.5x a log table's W1", w4, w1, ok4, okW1, 1.5, true, "W4/W1")
	w5, ok5 := get("W5", colFluss)
	check("W5 at most 1.2x the same rows log-only (W1)", w5, w1, ok5, okW1, 1.2, true, "W5/W1")
	p50, ok6 := get("W6p50", colFluss)
	check("W6 p50 at most 5 µs", p50, 1, ok6, true, 5, true, "p50 µs")
	s50, okS6 := get("W6p50", colSQLite)
	check("W6 p50 at most SQLite's with an index", p50, s50, ok6, okS6, 1, true, "fluss/SQLite")
	w7, ok7 := get("W7", colFluss)
	s7, okS7 := get("W7", colSQLite)
	check("W7 prepared INSERT at least SQLite's rows/s", w7, s7, ok7, okS7, 1, false, "fluss/SQLite rows/s")
	a7, okA7 := get("W7d", colFluss)
	check("W7 AppendArrow at least 5 million rows/s", a7, 1e6, okA7, true, 5, false, "million rows/s")
	w8, ok8 := get("W8", colFluss)
	d8, okD8 := get("W8", colDuck)
	s8, okS8 := get("W8", colSQLite)
	check("W8 within 2x DuckDB", w8, d8, ok8, okD8, 2, true, "fluss/DuckDB")
	check("W8 at least 5x faster than SQLite", s8, w8, okS8, ok8, 5, false, "SQLite/fluss")
	w9, ok9 := get("W9", colFluss)
	check("W9 at least 10x W1's rows/s", w1, w9, okW1, ok9, 10, false, "W1 time/W9 time")
	r1, okR1 := get("RSS@1000000", colFluss)
	r10, okR10 := get("RSS@10000000", colFluss)
	check("W1 peak RSS at 10M rows within 1.5x that at 1M", r10, r1, okR10, okR1, 1.5, true, "RSS 10M/1M")
	t2, okT2 := get("T2p50", colFluss)
	check("T2 unique-index lookup p50 within 1.5x W6's key lookup", t2, p50, okT2, ok6, 1.5, true, "T2/W6")
	sT2, okST2 := get("T2p50", colSQLite)
	check("T2 p50 at most SQLite's with its index", t2, sT2, okT2, okST2, 1, true, "fluss/SQLite")
	for _, n := range t1Workers {
		id := fmt.Sprintf("T1@%d", n)
		f, okF := get(id, colFluss)
		s, okS := get(id, colSQLite)
		check(id+" transfers/s at least SQLite's", f, s, okF, okS, 1, false, "fluss/SQLite tx/s")
	}
	out = append(out, h.joinBars(get)...)
	return append(out, streamBars(get)...)
}

// streamBars are issue 18's bars, fluss's alone.
func streamBars(get func(id, c string) (float64, bool)) []bar {
	s50, ok50 := get("S1p50", colFluss)
	s99, ok99 := get("S1p99", colFluss)
	s2, okS2 := get("S2", colFluss)
	s2scan, okS2scan := get("S2scan", colFluss)
	s3, okS3 := get("S3", colFluss)
	s3scan, okS3scan := get("S3scan", colFluss)
	idle, okIdle := get("SIDLE", colFluss)
	idleBase, okIdleBase := get("SIDLEbase", colFluss)
	return []bar{
		judge("S1 subscription latency p50 at most 200 µs", s50, 1, ok50, true, 200, true, "p50 µs"),
		judge("S1 subscription latency p99 at most 2 ms", s99, 1, ok99, true, 2000, true, "p99 µs"),
		judge("S2 full subscription at least 80% of QueryArrow's rows/s", s2, s2scan, okS2, okS2scan, 0.8, false, "subscription/QueryArrow rows/s"),
		judge("S3 catch-up at most a batch read + 10%", s3, s3scan, okS3, okS3scan, 1.1, true, "S3/QueryArrow time"),
		judge(fmt.Sprintf("SIDLE idle subscription adds under %g ms of CPU per s", idleCPUBar), idle-idleBase, 1, okIdle && okIdleBase, true, idleCPUBar, true, "SIDLE-SIDLEbase CPU ms/s"),
	}
}

// judge is the bar "a op limit*b" where a and b are medians: a/b at most
// limit when atMost, else at least limit.
func judge(name string, a, b float64, okA, okB bool, limit float64, atMost bool, what string) bar {
	if !okA || !okB || b == 0 {
		return bar{name, "n/a", "a figure is missing"}
	}
	x := a / b
	met := x <= limit
	if !atMost {
		met = x >= limit
	}
	status := "MISSED"
	if met {
		status = "met"
	}
	return bar{name, status, fmt.Sprintf("%s = %.3g (bar %s %.3g)", what, x, map[bool]string{true: "<=", false: ">="}[atMost], limit)}
}

// write puts results.csv, bars.csv, machine.txt and ratios.png into dir.
func (h *harness) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "results.csv"))
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.Write([]string{"workload", "title", "unit", "rows", "runs", "fluss", "duckdb", "sqlite", "floor",
		"fluss_over_duckdb", "fluss_over_sqlite", "fluss_note", "duckdb_note", "sqlite_note"})
	num := func(r *result, c string) string {
		if m, ok := r.median(c); ok {
			return strconv.FormatFloat(m, 'g', 6, 64)
		}
		return ""
	}
	rat := func(r *result, c string) string {
		if x, ok := ratio(r, c); ok {
			return strconv.FormatFloat(x, 'g', 4, 64)
		}
		return ""
	}
	for _, r := range h.results {
		runs := 0
		for _, v := range r.vals {
			runs = max(runs, len(v))
		}
		cw.Write([]string{r.id, r.title, r.unit, fmt.Sprint(h.g.n), fmt.Sprint(runs),
			num(r, colFluss), num(r, colDuck), num(r, colSQLite), num(r, colFloor),
			rat(r, colDuck), rat(r, colSQLite), r.notes[colFluss], r.notes[colDuck], r.notes[colSQLite]})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	f, err = os.Create(filepath.Join(dir, "bars.csv"))
	if err != nil {
		return err
	}
	cw = csv.NewWriter(f)
	cw.Write([]string{"bar", "status", "detail"})
	for _, b := range h.bars() {
		cw.Write([]string{b.name, b.status, b.detail})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	machine := fmt.Sprintf("rows=%d runs=%d\n%s\n", h.g.n, h.cfg.runs, strings.Join(h.machine, "\n"))
	if err := os.WriteFile(filepath.Join(dir, "machine.txt"), []byte(machine), 0o644); err != nil {
		return err
	}
	return h.chart(filepath.Join(dir, "ratios.png"))
}

// describeMachine names the CPU, memory, Go and the peers' versions.
func describeMachine(ctx context.Context, duck, lite *sql.DB) []string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && k == "MemTotal" {
				f := strings.Fields(v)
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					mem = fmt.Sprintf(", %.0f GiB memory", kb/(1<<20))
				}
			}
		}
	}
	var dv, sv string
	if err := duck.QueryRowContext(ctx, `SELECT version()`).Scan(&dv); err != nil {
		dv = "?"
	}
	if err := lite.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&sv); err != nil {
		sv = "?"
	}
	return []string{
		fmt.Sprintf("machine: %s, %d logical CPUs%s, %s/%s", cpu, runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH),
		fmt.Sprintf("software: %s, DuckDB %s (duckdb-go), SQLite %s (mattn/go-sqlite3)", runtime.Version(), dv, sv),
	}
}

// log10 of a ratio, for the chart's symmetric scale.
func log10(x float64) float64 { return math.Log10(x) }
