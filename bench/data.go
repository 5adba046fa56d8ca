package main

import (
	"strconv"
	"time"
)

// days is the number of day partitions the rows are spread over; W2 reads
// one of them.
const days = 100

// base is the timestamp of row 0. Timestamps grow with the row number, so
// a ts range is a contiguous run of rows: what a time-ordered event log
// looks like, and what makes statistics (and SQLite's index) useful for W3.
var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// gen describes the generated data set: n rows of
// (id BIGINT, ts TIMESTAMP(3), k INT, v DOUBLE, s STRING), plus the day
// of ts for the partitioned table. Row i is a pure function of i, so every
// system gets exactly the same rows whatever order it loads them in.
type gen struct {
	n int64
	// stepMs is the distance between consecutive timestamps, chosen so
	// the rows cover exactly days days.
	stepMs int64
}

func newGen(n int64) gen {
	return gen{n: n, stepMs: max(1, int64(days)*86_400_000/max(n, 1))}
}

// row is one generated row; day is ts truncated to its date (UTC).
type row struct {
	id  int64
	ts  time.Time
	k   int32
	v   float64
	s   string
	day time.Time
}

// mix is splitmix64's finaliser: a cheap, well-spread hash of the row
// number, so that k, v and s do not follow id.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// at returns row i of generation g (g = 0 for the loaded rows; updates of
// key tables use g > 0 so that their values differ).
func (d gen) at(i int64, g int) row {
	h := mix(uint64(i)*31 + uint64(g))
	ts := base.Add(time.Duration(i*d.stepMs) * time.Millisecond)
	var buf [24]byte
	s := append(buf[:0], 's', '-')
	s = strconv.AppendUint(s, h%10_000_000_000, 36)
	if g > 0 {
		s = append(s, '-')
		s = strconv.AppendInt(s, int64(g), 10)
	}
	return row{
		id:  i,
		ts:  ts,
		k:   int32(mix(uint64(i)) % 1000),
		v:   float64(h>>40) / 1024,
		s:   string(s),
		day: ts.Truncate(24 * time.Hour),
	}
}

// dayOf returns the date of partition p (0 <= p < days).
func dayOf(p int) time.Time { return base.AddDate(0, 0, p) }

// rowsInDay counts the rows whose ts falls on day p.
func (d gen) rowsInDay(p int) int64 {
	lo, hi := d.firstAtOrAfter(dayOf(p)), d.firstAtOrAfter(dayOf(p+1))
	return hi - lo
}

// firstAtOrAfter returns the first row number whose ts is at or after t
// (n when there is none).
func (d gen) firstAtOrAfter(t time.Time) int64 {
	ms := t.Sub(base).Milliseconds()
	if ms <= 0 {
		return 0
	}
	i := (ms + d.stepMs - 1) / d.stepMs
	return min(i, d.n)
}

// selectiveRange returns W3's ts range [lo, hi): 1% of the rows, placed
// away from partition and batch boundaries, and the rows it holds.
func (d gen) selectiveRange() (lo, hi time.Time, rows int64) {
	first := d.n * 373 / 1000
	last := first + max(d.n/100, 1)
	lo = base.Add(time.Duration(first*d.stepMs) * time.Millisecond)
	hi = base.Add(time.Duration(last*d.stepMs) * time.Millisecond)
	return lo, hi, d.firstAtOrAfter(hi) - d.firstAtOrAfter(lo)
}

// row0 is row i of the loaded rows (generation 0).
func (d gen) row0(i int64) row { return d.at(i, 0) }
