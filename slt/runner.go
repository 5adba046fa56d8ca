package slt

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Class is why a record did not pass.
type Class int

const (
	// Refused: the database returned an error for a statement or query
	// that should have succeeded.
	Refused Class = iota
	// AfterRefused: a query failed in a script where an earlier statement
	// that should have succeeded was refused, so its tables may not hold
	// what the script assumes; a consequence, not a fault of its own.
	AfterRefused
	// Wrong: the database answered and the answer differs from the
	// expected one, with no refused statement before it.
	Wrong
	// ErrorExpected: a statement that should have failed succeeded.
	ErrorExpected
	// Hang: a statement did not return within the timeout.
	Hang
	// Panic: the database reported a panic it recovered from as an error.
	Panic
	numClasses
)

var classNames = [numClasses]string{"refused", "after-refused", "wrong", "expected-error", "hang", "panic"}

func (c Class) String() string { return classNames[c] }

// Failure is one record that did not pass.
type Failure struct {
	Record *Record
	Class  Class
	// Cause groups failures: the first words of the error for Refused
	// and Panic, those of the refused statement for AfterRefused, empty
	// otherwise.
	Cause string
	// Detail says what happened: the error, or the expected and actual
	// results.
	Detail string
}

// Result is the outcome of one script.
type Result struct {
	Records  int // statements and queries run (not skipped)
	Passed   int
	Failures []Failure
	// Halted is set when a hang ended the script early: the database
	// may still be running the statement, so nothing more is sent to it.
	Halted bool
}

// Count is the number of failures of class c.
func (r *Result) Count(c Class) int {
	n := 0
	for _, f := range r.Failures {
		if f.Class == c {
			n++
		}
	}
	return n
}

// Runner runs scripts against a database.
type Runner struct {
	// Timeout bounds each statement; one that takes longer is a hang.
	Timeout time.Duration
}

// Run runs recs against db, which should be empty, and returns what
// passed and what did not. It recovers nothing: a panic in the database
// crashes the caller.
func (r *Runner) Run(db *sql.DB, recs []Record) *Result {
	res := &Result{}
	// taint is the cause of the first refused statement that may change
	// what later records see; "" while there is none.
	taint := ""
	labels := map[string]string{}
	for i := range recs {
		rec := &recs[i]
		if rec.Skip {
			continue
		}
		switch rec.Kind {
		case Halt:
			return res
		case HashThreshold:
			// Only the writer of a script needs the threshold: the
			// expected result's form says which comparison to make.
			continue
		}
		res.Records++
		var (
			vals  []string
			err   error
			wrong string
		)
		done, hung := r.bounded(func(ctx context.Context) {
			if rec.Kind == Query {
				vals, wrong, err = query(ctx, db, rec)
			} else {
				_, err = db.ExecContext(ctx, rec.SQL)
			}
		})
		if hung || errors.Is(err, context.DeadlineExceeded) {
			res.Failures = append(res.Failures, Failure{Record: rec, Class: Hang,
				Detail: fmt.Sprintf("no answer within %v", r.Timeout)})
			res.Halted = !done
			if res.Halted {
				return res
			}
			continue
		}
		if err != nil && isPanic(err) {
			res.Failures = append(res.Failures, Failure{Record: rec, Class: Panic, Cause: Cause(err), Detail: err.Error()})
			continue
		}
		switch {
		case rec.Kind == StatementError:
			if err == nil {
				res.Failures = append(res.Failures, Failure{Record: rec, Class: ErrorExpected, Detail: "succeeded"})
				continue
			}
		case err != nil:
			f := Failure{Record: rec, Class: Refused, Cause: Cause(err), Detail: err.Error()}
			if rec.Kind == Query && taint != "" {
				f.Class, f.Cause = AfterRefused, taint
			}
			if rec.Kind == StatementOK && taint == "" && taints(rec.SQL) {
				taint = f.Cause
			}
			res.Failures = append(res.Failures, f)
			continue
		case rec.Kind == Query:
			if wrong == "" && rec.Label != "" {
				h := Hash(vals)
				if prev, ok := labels[rec.Label]; ok && prev != h {
					wrong = fmt.Sprintf("result differs from the earlier queries labelled %s", rec.Label)
				}
				labels[rec.Label] = h
			}
			if wrong != "" {
				f := Failure{Record: rec, Class: Wrong, Detail: wrong}
				if taint != "" {
					f.Class, f.Cause = AfterRefused, taint
				}
				res.Failures = append(res.Failures, f)
				continue
			}
		}
		res.Passed++
	}
	return res
}

// bounded runs f with a context that expires after the timeout. It waits
// a little longer than that for f to notice; if f still has not returned,
// it reports a hang and leaves f running (done false). f runs in its own
// goroutine without a recover, so a panic in it crashes the process.
func (r *Runner) bounded(f func(ctx context.Context)) (done, hung bool) {
	ctx, cancel := context.WithTimeout(context.Background(), r.Timeout)
	defer cancel()
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		f(ctx)
	}()
	grace := time.NewTimer(r.Timeout + r.Timeout/2 + time.Second)
	defer grace.Stop()
	select {
	case <-ch:
		return true, ctx.Err() != nil
	case <-grace.C:
		return false, true
	}
}

// query runs a query record and compares its result. It returns the
// rendered values, a description of the difference when the answer is
// wrong, or the database's error.
func query(ctx context.Context, db *sql.DB, rec *Record) ([]string, string, error) {
	rows, err := db.QueryContext(ctx, rec.SQL)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, "", err
	}
	if len(cols) != len(rec.Types) {
		return nil, fmt.Sprintf("%d columns, want %d", len(cols), len(rec.Types)), nil
	}
	var table [][]string
	cells := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range cells {
		ptrs[i] = &cells[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, "", err
		}
		row := make([]string, len(cols))
		for i, v := range cells {
			row[i] = Render(v, rec.Types[i])
		}
		table = append(table, row)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	vals := sortValues(table, rec.Sort)
	return vals, compare(rec, vals), nil
}

// compare returns "" when vals is the expected result, else what differs.
func compare(rec *Record, vals []string) string {
	if rec.Hashed() {
		if h := Hash(vals); len(vals) != rec.HashCount || h != rec.Hash {
			return fmt.Sprintf("got %d values hashing to %s, want %d values hashing to %s%s",
				len(vals), h, rec.HashCount, rec.Hash, preview(vals))
		}
		return ""
	}
	// The script may put several values on a line, so both sides are
	// compared as whitespace-separated words.
	var got []string
	for _, v := range vals {
		got = append(got, strings.Fields(v)...)
	}
	if len(got) == len(rec.Expected) {
		same := true
		for i := range got {
			if got[i] != rec.Expected[i] {
				same = false
				break
			}
		}
		if same {
			return ""
		}
	}
	return fmt.Sprintf("got [%s], want [%s]", clip(got), clip(rec.Expected))
}

func preview(vals []string) string {
	if len(vals) == 0 {
		return ""
	}
	return fmt.Sprintf(" (first values [%s])", clip(vals))
}

func clip(vals []string) string {
	const most = 12
	if len(vals) > most {
		return strings.Join(vals[:most], " ") + fmt.Sprintf(" ... %d more", len(vals)-most)
	}
	return strings.Join(vals, " ")
}

// taints reports whether refusing stmt can change what later records
// see. An index is an access path only: refusing CREATE INDEX, DROP INDEX
// or REINDEX leaves every later answer as it was, so the queries after it
// are still judged on their own.
func taints(stmt string) bool {
	f := strings.Fields(strings.ToUpper(stmt))
	switch {
	case len(f) >= 2 && (f[0] == "CREATE" || f[0] == "DROP") && f[1] == "INDEX",
		len(f) >= 3 && f[0] == "CREATE" && f[1] == "UNIQUE" && f[2] == "INDEX",
		len(f) >= 1 && f[0] == "REINDEX":
		return false
	}
	return true
}

// isPanic reports whether the database turned a panic of its own into
// this error: still a panic, and a failure whatever the record expects.
func isPanic(err error) bool {
	return strings.Contains(err.Error(), "panic")
}

// Cause is the first words of an error, without the driver's prefix, the
// position or what names a particular table, column or value, so that
// errors of one kind group together. A syntax error keeps the word it
// stopped at, which is what tells one missing form from another.
func Cause(err error) string {
	msg := strings.TrimPrefix(err.Error(), "fluss: ")
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if rest, ok := strings.CutPrefix(msg, "syntax error"); ok {
		if _, near, ok := strings.Cut(rest, " near "); ok && near != "" {
			return "syntax error near " + strings.TrimRight(strings.Fields(near)[0], ":,")
		}
		return "syntax error"
	}
	var words []string
	for _, w := range strings.Fields(msg) {
		if strings.ContainsAny(w[:1], "'\"`") || strings.ContainsAny(w, "0123456789") {
			w = "_"
		}
		words = append(words, w)
		if len(words) == 6 {
			break
		}
	}
	return strings.Join(words, " ")
}
