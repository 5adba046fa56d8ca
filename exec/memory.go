package exec

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/metadata"
)

// ErrMemoryLimit is matched (errors.Is) by the error of a sort, top-N,
// aggregation, DISTINCT, join or set operation that would hold more than
// Options.MemoryLimit.
// That error also matches metadata.ErrInvalidValue: the query is valid
// SQL, but not within the limit it was given.
var ErrMemoryLimit = errors.New("memory limit exceeded")

// MemoryLimitError says which operator went over the limit and how far it
// had got.
type MemoryLimitError struct {
	Limit int64
	// Op is "GROUP BY", "ORDER BY", "DISTINCT", "COUNT(DISTINCT ...)",
	// "JOIN", "UNION", "INTERSECT" or "EXCEPT";
	// query reports "INSERT ... SELECT", "CREATE TABLE ... AS" and "a
	// subquery" for the rows a statement holds.
	Op string
	// Detail counts what the operator held: "1,234 groups", "5,000 rows".
	Detail string
}

func (e *MemoryLimitError) Error() string {
	return fmt.Sprintf("memory.limit of %s exceeded by %s (%s); raise memory.limit in the DSN", FormatBytes(e.Limit), e.Op, e.Detail)
}

// Unwrap makes the error match ErrMemoryLimit and metadata.ErrInvalidValue.
func (e *MemoryLimitError) Unwrap() []error { return []error{ErrMemoryLimit, metadata.ErrInvalidValue} }

// memBudget tracks the approximate bytes one operator holds.
type memBudget struct {
	limit int64 // <= 0: unlimited
	used  int64
	// pool, when set, sums used across the workers of one parallel
	// operator, which share the limit.
	pool *atomic.Int64
}

func (m *memBudget) grow(n int64) {
	m.used += n
	if m.pool != nil {
		m.pool.Add(n)
	}
}

// check fails when the operator holds more than the limit; detail is
// called only then.
func (m *memBudget) check(op string, detail func() string) error {
	used := m.used
	if m.pool != nil {
		used = m.pool.Load()
	}
	if m.limit > 0 && used > m.limit {
		return &MemoryLimitError{Limit: m.limit, Op: op, Detail: detail()}
	}
	return nil
}

// FormatBytes renders a byte count in the units the DSN accepts: 256MiB,
// 1GiB, 1536KiB, 100B.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	if n >= 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + "MiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// count renders n with thousands separators and the noun, plural unless
// n is 1: "1,234,567 groups", "1 group".
func count(n int64, what string) string {
	if n != 1 {
		what += "s"
	}
	s := strconv.FormatInt(n, 10)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out) + " " + what
}

// recordBytes is the size of the buffers rec references (shared buffers
// count once per record that holds them, which overestimates; slices
// count their whole buffers).
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}
