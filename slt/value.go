package slt

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Render formats one value as the reference harness does for a column of
// type typ: 'I' a decimal integer (a real truncated toward zero, text by
// its numeric prefix), 'R' a real with three decimals, 'T' the text with
// "(empty)" for an empty string and '@' for each byte outside printable
// ASCII. NULL is "NULL" in every type.
func Render(v any, typ byte) string {
	if v == nil {
		return "NULL"
	}
	switch typ {
	case 'I':
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10)
		case float64:
			return strconv.FormatInt(truncate(x), 10)
		case bool:
			return boolText(x)
		default:
			s := text(v)
			if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return strconv.FormatInt(i, 10)
			}
			return strconv.FormatInt(truncate(numericPrefix(s)), 10)
		}
	case 'R':
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		case bool:
			if x {
				f = 1
			}
		default:
			f = numericPrefix(text(v))
		}
		return fmt.Sprintf("%.3f", f)
	default:
		s := text(v)
		if s == "" {
			return "(empty)"
		}
		b := []byte(s)
		for i, c := range b {
			if c < ' ' || c > '~' {
				b[i] = '@'
			}
		}
		return string(b)
	}
}

func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// text is a value's text as a client would print it.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return boolText(x)
	case time.Time:
		return x.Format("2006-01-02 15:04:05")
	default:
		return fmt.Sprint(x)
	}
}

// truncate converts toward zero, saturating at the int64 range so that an
// out-of-range real still renders as a number.
func truncate(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// numericPrefix is the value of the longest prefix of s that reads as a
// number (after leading spaces), 0 when there is none: how SQLite and
// MySQL read text as a number.
func numericPrefix(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\r")
	end, digits := 0, false
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end, digits = end+1, true
	}
	if end < len(s) && s[end] == '.' {
		end++
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end, digits = end+1, true
		}
	}
	if !digits {
		return 0
	}
	if end < len(s) && (s[end] == 'e' || s[end] == 'E') {
		e := end + 1
		if e < len(s) && (s[e] == '+' || s[e] == '-') {
			e++
		}
		if e < len(s) && s[e] >= '0' && s[e] <= '9' {
			for e < len(s) && s[e] >= '0' && s[e] <= '9' {
				e++
			}
			end = e
		}
	}
	// The prefix is well formed, so the only error is a range error, for
	// which ParseFloat's ±Inf is the right value.
	f, _ := strconv.ParseFloat(s[:end], 64)
	return f
}

// sortValues orders the rendered rows (each of width columns) as the
// query's sort mode asks, comparing as strings, and returns them as one
// flat list.
func sortValues(rows [][]string, mode Sort) []string {
	switch mode {
	case RowSort:
		sort.SliceStable(rows, func(i, j int) bool {
			a, b := rows[i], rows[j]
			for k := range min(len(a), len(b)) {
				if a[k] != b[k] {
					return a[k] < b[k]
				}
			}
			return len(a) < len(b)
		})
	}
	var flat []string
	for _, r := range rows {
		flat = append(flat, r...)
	}
	if mode == ValueSort {
		sort.Strings(flat)
	}
	return flat
}

// Hash is the MD5 of every value followed by a newline, in hex: the form
// in which scripts give long results.
func Hash(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
