package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flusslite/fluss"
)

// errQuit ends the session (.quit, .exit); it is not a failure.
var errQuit = errors.New("quit")

// shell is one session: the database it has open, on one connection (so
// that USE and other connection state last across statements), and the
// settings of its dot commands. It is used by one goroutine.
type shell struct {
	dsn  string
	db   *sql.DB
	conn *sql.Conn

	// out is the session's buffered standard output, flushed after each
	// statement; errOut gets errors and progress, unbuffered.
	out    *bufio.Writer
	errOut io.Writer
	// errTTY: errOut is a terminal, so progress bars and spinners are
	// drawn on it; elsewhere they would only litter a log.
	errTTY bool

	mode    string
	timer   bool
	explain bool

	// batchRows is how many rows .import appends per AppendArrow call,
	// and progressMin the file size from which it draws a progress bar.
	batchRows   int
	progressMin int64

	// readDepth is how many .read scripts are running, one inside another.
	readDepth int
}

func newShell(stdout, stderr io.Writer, errTTY bool) *shell {
	return &shell{
		out:         bufio.NewWriterSize(stdout, 64<<10),
		errOut:      stderr,
		errTTY:      errTTY,
		mode:        modeTable,
		batchRows:   64 << 10,
		progressMin: 1 << 20,
	}
}

// open opens dsn and makes it the session's database, closing the one
// open before only once the new one opened.
func (s *shell) open(ctx context.Context, dsn string) error {
	db, err := sql.Open("fluss", dsn)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return err
	}
	if err := s.close(); err != nil {
		fmt.Fprintf(s.errOut, "Error: closing %s: %v\n", s.dsn, err)
	}
	s.dsn, s.db, s.conn = dsn, db, conn
	return nil
}

// close closes the session's database; it is idempotent.
func (s *shell) close() error {
	if s.db == nil {
		return nil
	}
	err := s.conn.Close()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	s.db, s.conn = nil, nil
	return err
}

// script is the state of one input being read: the text of a statement
// not yet ended by a semicolon.
type script struct {
	pending string
}

// runScript reads r line by line and runs its statements and dot
// commands. It stops at the first error and returns it (unreported); at
// the end of the input an unfinished last statement runs as if it ended
// with a semicolon.
func (s *shell) runScript(ctx context.Context, r io.Reader) error {
	var sc script
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return err
		}
		if line != "" || err == nil {
			if xerr := s.execLine(ctx, &sc, strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")); xerr != nil {
				return xerr
			}
		}
		if err == io.EOF {
			break
		}
	}
	if last := strings.TrimSpace(sc.pending); !blank(last) {
		sc.pending = ""
		return s.runSQL(ctx, last)
	}
	return nil
}

// execLine handles one line of input: a dot command when no statement is
// pending, else SQL text added to the pending statement, running each
// statement the line ends.
func (s *shell) execLine(ctx context.Context, sc *script, line string) error {
	if sc.pending == "" {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, ".") {
			return s.dot(ctx, t)
		}
		if blank(line) && !strings.Contains(line, "/*") {
			return nil
		}
	}
	sc.pending += line + "\n"
	if !strings.Contains(line, ";") {
		return nil
	}
	stmts, rest := splitStatements(sc.pending)
	sc.pending = rest
	if blank(rest) && !strings.Contains(rest, "/*") {
		sc.pending = ""
	}
	for _, st := range stmts {
		if err := s.runSQL(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// stmtError is an error of one statement, kept with its text so that
// the report can point into it.
type stmtError struct {
	sql string
	err error
}

func (e *stmtError) Error() string { return e.err.Error() }
func (e *stmtError) Unwrap() error { return e.err }

// runSQL runs one statement and prints its result.
func (s *shell) runSQL(ctx context.Context, text string) error {
	defer s.out.Flush()
	kw := firstKeyword(text)
	start := time.Now()
	if !returnsRows(kw) {
		res, err := s.conn.ExecContext(ctx, text)
		if err != nil {
			return &stmtError{sql: text, err: err}
		}
		if s.timer {
			n, _ := res.RowsAffected()
			fmt.Fprintf(s.out, "%s affected in %s\n", plural(n, "row"), elapsed(start))
		}
		return nil
	}
	if s.explain && kw == "SELECT" {
		// A plan that fails to build means the query fails too; its own
		// error, with positions into the text as typed, is the one shown.
		if lines, err := s.planLines(ctx, "EXPLAIN "+text); err == nil {
			fmt.Fprint(s.out, renderPlan(lines))
		}
		start = time.Now()
	}
	rows, err := s.conn.QueryContext(ctx, text)
	if err != nil {
		return &stmtError{sql: text, err: err}
	}
	defer rows.Close()
	src, err := sqlSource(rows)
	if err != nil {
		return &stmtError{sql: text, err: err}
	}
	var n int64
	if kw == "EXPLAIN" && s.mode == modeTable && len(src.cols) == 1 {
		var lines []string
		for {
			vals, err := src.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return &stmtError{sql: text, err: err}
			}
			lines = append(lines, textValue(vals[0], src.cols[0]))
		}
		n = int64(len(lines))
		fmt.Fprint(s.out, renderPlan(lines))
	} else if n, err = printRows(s.out, s.mode, src); err != nil {
		return &stmtError{sql: text, err: err}
	}
	if err := rows.Close(); err != nil {
		return &stmtError{sql: text, err: err}
	}
	if s.timer {
		fmt.Fprintf(s.out, "%s in %s\n", plural(n, "row"), elapsed(start))
	}
	return nil
}

// planLines runs an EXPLAIN and returns its lines.
func (s *shell) planLines(ctx context.Context, text string) ([]string, error) {
	rows, err := s.conn.QueryContext(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, err
		}
		lines = append(lines, l)
	}
	return lines, rows.Err()
}

// report writes err to the error output. An error of a statement that
// knows its position in the text shows the statement's line with a caret
// under it.
func (s *shell) report(err error) {
	s.out.Flush()
	msg := err.Error()
	var se *stmtError
	var fe *fluss.Error
	if !errors.As(err, &se) || !errors.As(err, &fe) || fe.Pos < 0 || fe.Pos > len(se.sql) {
		fmt.Fprintf(s.errOut, "Error: %s\n", msg)
		return
	}
	line, col, text := lineAt(se.sql, fe.Pos)
	if !strings.Contains(msg, " at line ") {
		msg += fmt.Sprintf(" at line %d, column %d", line, col)
	}
	fmt.Fprintf(s.errOut, "Error: %s\n%s\n%s^\n", msg, text, caretPad(text[:col-1]))
}

// lineAt returns the line and byte column (both from 1) of byte pos of
// text, and that line's text.
func lineAt(text string, pos int) (line, col int, lineText string) {
	startOfLine := strings.LastIndexByte(text[:pos], '\n') + 1
	end := strings.IndexByte(text[pos:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += pos
	}
	return 1 + strings.Count(text[:pos], "\n"), pos - startOfLine + 1, strings.TrimSuffix(text[startOfLine:end], "\r")
}

// caretPad is the white space that puts a caret under the byte after
// prefix: tabs are kept so that they expand alike, and every other
// character becomes as many spaces as its display width.
func caretPad(prefix string) string {
	var b strings.Builder
	for _, r := range prefix {
		if r == '\t' {
			b.WriteByte('\t')
			continue
		}
		b.WriteString(strings.Repeat(" ", max(runeWidth(r), 0)))
	}
	return b.String()
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func elapsed(start time.Time) string {
	d := time.Since(start)
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
