package metadata

import "errors"

// Sentinel errors shared by every layer. Messages are lower-case and carry
// no "fluss:" prefix; the driver adds it once at its boundary.
var (
	// ErrNotFound: a database, table, partition, column or snapshot does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: a database, table or partition already exists.
	ErrExists = errors.New("already exists")
	// ErrInvalidType: a data type is malformed or out of Fluss's limits.
	ErrInvalidType = errors.New("invalid data type")
	// ErrInvalidOption: a table option or DSN option is unknown or has a bad value.
	ErrInvalidOption = errors.New("invalid option")
	// ErrInvalidValue: a value does not fit its column (overflow, bad date, too long).
	ErrInvalidValue = errors.New("invalid value")
	// ErrConstraint: a NOT NULL or key constraint would be violated.
	ErrConstraint = errors.New("constraint violation")
	// ErrUnsupported: the statement or feature is not supported.
	ErrUnsupported = errors.New("unsupported")
	// ErrSyntax: SQL text does not parse.
	ErrSyntax = errors.New("syntax error")
	// ErrCorrupt: bytes on disk fail their checks.
	ErrCorrupt = errors.New("corrupt data")
	// ErrLocked: the directory is in use by another process.
	ErrLocked = errors.New("database is locked")
	// ErrClosed: the engine has been closed.
	ErrClosed = errors.New("engine is closed")
	// ErrReadOnly: the engine refuses writes after a failed write.
	ErrReadOnly = errors.New("engine is read-only")
	// ErrConflict: a transaction's commit lost to another commit that wrote
	// one of its keys after the transaction began (first committer wins);
	// nothing of it was applied, and it may be retried.
	ErrConflict = errors.New("write conflict")
)

// ErrInvalidTable: a table definition is inconsistent (duplicate columns,
// a partition key outside the primary key, a bad table name, ...). Errors
// about a column that does not exist also wrap ErrNotFound.
var ErrInvalidTable = errors.New("invalid table definition")
