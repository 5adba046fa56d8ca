package fluss

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Sentinel errors. Every error the driver returns is an *Error that wraps
// one of these (or a context error), so errors.Is works on it.
var (
	ErrSyntax      = metadata.ErrSyntax
	ErrNotFound    = metadata.ErrNotFound
	ErrExists      = metadata.ErrExists
	ErrConstraint  = metadata.ErrConstraint
	ErrUnsupported = metadata.ErrUnsupported
	ErrLocked      = metadata.ErrLocked
	ErrCorrupt     = metadata.ErrCorrupt
	ErrReadOnly    = metadata.ErrReadOnly
	ErrInvalid     = metadata.ErrInvalidValue
	ErrClosed      = metadata.ErrClosed
	// ErrConflict: a transaction's Commit lost to another commit that
	// wrote one of its keys (or one it read FOR UPDATE) after its Begin;
	// nothing of it was applied. Retry the transaction.
	ErrConflict = metadata.ErrConflict
	// ErrInvalidTable: a table definition is inconsistent (a partition key
	// outside the primary key, a bucket key that does not exist, ...).
	ErrInvalidTable = metadata.ErrInvalidTable
	// ErrInvalidOption: a DSN or table option is unknown or malformed.
	ErrInvalidOption = metadata.ErrInvalidOption
)

// Code classifies an Error.
type Code int

// Error codes.
const (
	CodeInternal Code = iota
	CodeSyntax
	CodeNotFound
	CodeExists
	CodeConstraint
	CodeInvalidValue
	CodeInvalidOption
	CodeInvalidType
	CodeUnsupported
	CodeLocked
	CodeCorrupt
	CodeReadOnly
	CodeClosed
	CodeInvalidDSN
	CodeCanceled
	CodeInvalidTable
	CodeConflict
)

var codeNames = [...]string{
	CodeInternal: "internal", CodeSyntax: "syntax", CodeNotFound: "not found",
	CodeExists: "exists", CodeConstraint: "constraint", CodeInvalidValue: "invalid value",
	CodeInvalidOption: "invalid option", CodeInvalidType: "invalid type",
	CodeUnsupported: "unsupported", CodeLocked: "locked", CodeCorrupt: "corrupt",
	CodeReadOnly: "read-only", CodeClosed: "closed", CodeInvalidDSN: "invalid DSN",
	CodeCanceled: "canceled", CodeInvalidTable: "invalid table", CodeConflict: "conflict",
}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Error is the error type the driver returns.
type Error struct {
	Code Code
	// Msg is the message without the "fluss: " prefix.
	Msg string
	// Pos is the byte position in the SQL text the error refers to, or -1.
	Pos int
	err error
}

func (e *Error) Error() string { return "fluss: " + e.Msg }

// Unwrap returns the sentinel (or cause) the error wraps.
func (e *Error) Unwrap() error { return e.err }

var sentinelCodes = []struct {
	err  error
	code Code
}{
	{metadata.ErrSyntax, CodeSyntax},
	{metadata.ErrNotFound, CodeNotFound},
	{metadata.ErrExists, CodeExists},
	{metadata.ErrConstraint, CodeConstraint},
	{metadata.ErrInvalidValue, CodeInvalidValue},
	{metadata.ErrInvalidOption, CodeInvalidOption},
	{metadata.ErrInvalidType, CodeInvalidType},
	{metadata.ErrInvalidTable, CodeInvalidTable},
	{metadata.ErrUnsupported, CodeUnsupported},
	{metadata.ErrLocked, CodeLocked},
	{metadata.ErrCorrupt, CodeCorrupt},
	{metadata.ErrReadOnly, CodeReadOnly},
	{metadata.ErrClosed, CodeClosed},
	{metadata.ErrConflict, CodeConflict},
}

// wrapErr turns an error from the layers below into an *Error, once, at
// the driver boundary. Context errors are returned as they are, so that
// callers comparing with ctx.Err() see the same value.
func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &Error{Code: CodeInternal, Msg: err.Error(), Pos: -1, err: err}
	for _, sc := range sentinelCodes {
		if errors.Is(err, sc.err) {
			e.Code = sc.code
			break
		}
	}
	var pe interface{ Position() int }
	if errors.As(err, &pe) {
		e.Pos = pe.Position()
	}
	return e
}

// wrapSQLErr is wrapErr for an error about the SQL text: it gives the
// position as a line and column in the message. Parsed statements carry no
// positions for names, so an error about a name (an unknown column, an
// unsupported function) points at the name's first use in the text.
func wrapSQLErr(err error, text string) error {
	out := wrapErr(err)
	var fe *Error
	if !errors.As(out, &fe) || fe.err != err {
		return out // already placed, or a context error
	}
	if fe.Pos < 0 {
		var ne interface{ LocatedName() string }
		if !errors.As(err, &ne) || ne.LocatedName() == "" {
			return out
		}
		if fe.Pos = sqlplan.IdentPosition(text, ne.LocatedName()); fe.Pos < 0 {
			return out
		}
	}
	if fe.Pos > len(text) {
		return out
	}
	line, col := lineColumn(text, fe.Pos)
	at := fmt.Sprintf("at line %d, column %d", line, col)
	// The layers below name the byte offset; the user reads lines.
	for _, old := range []string{fmt.Sprintf("at position %d", fe.Pos), fmt.Sprintf("at end of input (position %d)", fe.Pos)} {
		if strings.Contains(fe.Msg, old) {
			fe.Msg = strings.Replace(fe.Msg, old, at, 1)
			return out
		}
	}
	fe.Msg += " " + at
	return out
}
