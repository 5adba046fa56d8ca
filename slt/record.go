// Package slt reads sqllogictest scripts (the format of SQLite's SQL test
// corpus) and runs them against a database/sql database, classifying
// every record that does not pass by its cause. The corpus itself is not
// part of the repository; the test in this module reads it from outside.
//
// A Runner is not safe for concurrent use; run one file per Runner.
package slt

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Dialect is the database name that skipif/onlyif conditions are matched
// against: fluss follows MySQL's semantics, so it runs MySQL's records.
const Dialect = "mysql"

// Kind is what a record asks of the database.
type Kind int

const (
	// StatementOK must succeed.
	StatementOK Kind = iota
	// StatementError must fail.
	StatementError
	// Query must succeed with the expected result.
	Query
	// HashThreshold changes the number of values above which the
	// expected result is given as a hash; it runs nothing.
	HashThreshold
	// Halt ends the script.
	Halt
)

// Sort is how a query's values are ordered before they are compared.
type Sort int

const (
	NoSort Sort = iota
	RowSort
	ValueSort
)

// Record is one record of a script.
type Record struct {
	Kind Kind
	// Line is the 1-based line of the record's first line (its first
	// condition, when it has one), for messages keyed by file and line.
	Line int
	// Skip is set when the conditions exclude this record for Dialect.
	Skip bool
	SQL  string

	// For a Query.
	Types string // one letter per column: I, R or T
	Sort  Sort
	Label string
	// Expected is the expected values, one per element. When the script
	// gives a hash instead, Expected is nil and HashCount/Hash are set.
	Expected  []string
	HashCount int
	Hash      string

	// For HashThreshold.
	Threshold int
}

// Hashed reports whether the expected result is given as a hash.
func (r *Record) Hashed() bool { return r.Hash != "" }

// Parse reads a whole script. An unknown record type is an error that
// names its line: a runner that silently skipped it would count nothing.
func Parse(in io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), " \t\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the script: %w", err)
	}
	p := parser{lines: lines}
	var recs []Record
	for {
		rec, ok, err := p.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return recs, nil
		}
		recs = append(recs, rec)
	}
}

type parser struct {
	lines []string
	pos   int // index of the next unread line
}

func (p *parser) next() (Record, bool, error) {
	// Skip blank lines and comments between records.
	for p.pos < len(p.lines) && (p.lines[p.pos] == "" || strings.HasPrefix(p.lines[p.pos], "#")) {
		p.pos++
	}
	if p.pos >= len(p.lines) {
		return Record{}, false, nil
	}
	rec := Record{Line: p.pos + 1}
	for {
		if p.pos >= len(p.lines) || p.lines[p.pos] == "" {
			return Record{}, false, fmt.Errorf("line %d: conditions without a record", rec.Line)
		}
		f := strings.Fields(p.lines[p.pos])
		switch f[0] {
		case "skipif", "onlyif":
			if len(f) < 2 {
				return Record{}, false, fmt.Errorf("line %d: %s names no database", p.pos+1, f[0])
			}
			if (f[0] == "skipif") == (f[1] == Dialect) {
				rec.Skip = true
			}
			p.pos++
			continue
		}
		break
	}
	header := strings.Fields(p.lines[p.pos])
	headerLine := p.pos + 1
	p.pos++
	switch header[0] {
	case "halt":
		rec.Kind = Halt
		return rec, true, nil
	case "hash-threshold":
		if len(header) != 2 {
			return Record{}, false, fmt.Errorf("line %d: hash-threshold wants one number", headerLine)
		}
		n, err := strconv.Atoi(header[1])
		if err != nil || n < 0 {
			return Record{}, false, fmt.Errorf("line %d: bad hash-threshold %q", headerLine, header[1])
		}
		rec.Kind, rec.Threshold = HashThreshold, n
		return rec, true, nil
	case "statement":
		if len(header) < 2 {
			return Record{}, false, fmt.Errorf("line %d: statement wants ok or error", headerLine)
		}
		switch header[1] {
		case "ok":
			rec.Kind = StatementOK
		case "error":
			rec.Kind = StatementError
		default:
			return Record{}, false, fmt.Errorf("line %d: statement %q is neither ok nor error", headerLine, header[1])
		}
		rec.SQL = p.sqlText(false)
	case "query":
		if len(header) < 3 {
			return Record{}, false, fmt.Errorf("line %d: query wants types and a sort mode", headerLine)
		}
		rec.Kind, rec.Types = Query, header[1]
		for _, c := range rec.Types {
			if c != 'I' && c != 'R' && c != 'T' {
				return Record{}, false, fmt.Errorf("line %d: unknown column type %q", headerLine, c)
			}
		}
		switch header[2] {
		case "nosort":
			rec.Sort = NoSort
		case "rowsort":
			rec.Sort = RowSort
		case "valuesort":
			rec.Sort = ValueSort
		default:
			return Record{}, false, fmt.Errorf("line %d: unknown sort mode %q", headerLine, header[2])
		}
		if len(header) > 3 {
			rec.Label = header[3]
		}
		rec.SQL = p.sqlText(true)
		if err := p.expected(&rec); err != nil {
			return Record{}, false, err
		}
	default:
		return Record{}, false, fmt.Errorf("line %d: unknown record %q", headerLine, header[0])
	}
	if rec.SQL == "" {
		return Record{}, false, fmt.Errorf("line %d: record without SQL", headerLine)
	}
	return rec, true, nil
}

// sqlText reads the SQL lines up to a blank line or, for a query, the
// "----" separator, which it leaves unread.
func (p *parser) sqlText(query bool) string {
	var sql []string
	for p.pos < len(p.lines) && p.lines[p.pos] != "" {
		if query && p.lines[p.pos] == "----" {
			break
		}
		sql = append(sql, p.lines[p.pos])
		p.pos++
	}
	return strings.Join(sql, "\n")
}

// expected reads a query's result after "----"; a query without the
// separator expects no rows.
func (p *parser) expected(rec *Record) error {
	if p.pos >= len(p.lines) || p.lines[p.pos] != "----" {
		rec.Expected = []string{}
		return nil
	}
	p.pos++
	var vals []string
	first := p.pos
	for p.pos < len(p.lines) && p.lines[p.pos] != "" {
		// Some scripts put a row's values on one line: values, not
		// lines, are compared.
		vals = append(vals, strings.Fields(p.lines[p.pos])...)
		p.pos++
	}
	if p.pos-first == 1 {
		if n, h, ok := hashLine(p.lines[first]); ok {
			rec.HashCount, rec.Hash = n, h
			return nil
		}
	}
	rec.Expected = vals
	if rec.Expected == nil {
		rec.Expected = []string{}
	}
	return nil
}

// hashLine matches "N values hashing to H" with H 32 hex digits.
func hashLine(s string) (int, string, bool) {
	f := strings.Fields(s)
	if len(f) != 5 || f[1] != "values" || f[2] != "hashing" || f[3] != "to" || len(f[4]) != 32 {
		return 0, "", false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return 0, "", false
	}
	for _, c := range f[4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, "", false
		}
	}
	return n, f[4], true
}
