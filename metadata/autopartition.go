package metadata

import (
	"fmt"
	"strings"
	"time"
)

// Auto-partitioning names a table's time partitions as Fluss's
// AutoPartitionManager does: the partition of an instant is its time unit
// (an hour, a day, a month, a quarter, a year in the table's zone)
// formatted by the unit's pattern or the table's time-format.

// unitPattern is each time unit's partition-name pattern.
var unitPattern = map[string]string{
	"HOUR": "yyyyMMddHH", "DAY": "yyyyMMdd", "MONTH": "yyyyMM", "QUARTER": "yyyyQ", "YEAR": "yyyy",
}

// goTimeLayout turns a Java date pattern of the tokens yyyy, MM, dd, HH
// and Q (and any character that is not a letter, kept as it is) into a Go
// layout with "Q" standing for the quarter.
func goTimeLayout(pattern string) (string, error) {
	if pattern == "" {
		return "", fmt.Errorf("an empty time format")
	}
	var b strings.Builder
	for rest := pattern; rest != ""; {
		switch {
		case strings.HasPrefix(rest, "yyyy"):
			b.WriteString("2006")
			rest = rest[4:]
		case strings.HasPrefix(rest, "MM"):
			b.WriteString("01")
			rest = rest[2:]
		case strings.HasPrefix(rest, "dd"):
			b.WriteString("02")
			rest = rest[2:]
		case strings.HasPrefix(rest, "HH"):
			b.WriteString("15")
			rest = rest[2:]
		case rest[0] == 'Q':
			b.WriteByte('Q')
			rest = rest[1:]
		case rest[0] >= 'a' && rest[0] <= 'z' || rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] >= '0' && rest[0] <= '9':
			return "", fmt.Errorf("time format %q: %q is not one of yyyy, MM, dd, HH, Q (or a separator)", pattern, rest[:1])
		default:
			b.WriteByte(rest[0])
			rest = rest[1:]
		}
	}
	return b.String(), nil
}

// Location is the zone the table's time partitions are cut in.
func (a *AutoPartition) Location() (*time.Location, error) {
	if a.TimeZone == "" {
		return time.Local, nil
	}
	return time.LoadLocation(a.TimeZone)
}

// UnitStart is the start of the time unit holding t, in loc.
func (a *AutoPartition) UnitStart(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	y, m, d := t.Date()
	switch a.TimeUnit {
	case "HOUR":
		return time.Date(y, m, d, t.Hour(), 0, 0, 0, loc)
	case "MONTH":
		return time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case "QUARTER":
		return time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, loc)
	case "YEAR":
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	}
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// AddUnits moves a unit start by n time units (negative: back).
func (a *AutoPartition) AddUnits(start time.Time, n int) time.Time {
	switch a.TimeUnit {
	case "HOUR":
		// By the wall clock, as the unit's names go: a day of a DST
		// change has 23 or 25 of them.
		y, m, d := start.Date()
		return time.Date(y, m, d, start.Hour()+n, 0, 0, 0, start.Location())
	case "MONTH":
		return start.AddDate(0, n, 0)
	case "QUARTER":
		return start.AddDate(0, 3*n, 0)
	case "YEAR":
		return start.AddDate(n, 0, 0)
	}
	return start.AddDate(0, 0, n)
}

// PartitionName is the name of the time partition of the unit starting at
// start: its pattern (TimeFormat, else the unit's) applied.
func (a *AutoPartition) PartitionName(start time.Time) string {
	pattern := a.TimeFormat
	if pattern == "" {
		pattern = unitPattern[a.TimeUnit]
	}
	layout, err := goTimeLayout(pattern)
	if err != nil {
		layout, _ = goTimeLayout(unitPattern[a.TimeUnit]) // parsing refused a bad format
	}
	q := fmt.Sprint((int(start.Month())-1)/3 + 1)
	var b strings.Builder
	for _, part := range strings.SplitAfter(layout, "Q") {
		lit, isQ := strings.CutSuffix(part, "Q")
		if lit != "" {
			b.WriteString(start.Format(lit))
		}
		if isQ {
			b.WriteString(q)
		}
	}
	return b.String()
}
