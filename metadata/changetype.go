package metadata

import "fmt"

// ChangeType is the kind of change one log record carries, as Fluss's
// ChangeType: a log table appends (+A); a primary-key table's changelog
// inserts (+I), retracts the old image of an update (-U), gives the new
// one (+U) or deletes (-D). Its value is the byte a log batch stores per
// record, so it never changes. A ChangeType is a plain value, safe to
// share.
type ChangeType byte

// The change types, in the order of their stored bytes.
const (
	ChangeAppendOnly   ChangeType = 0 // +A
	ChangeInsert       ChangeType = 1 // +I
	ChangeUpdateBefore ChangeType = 2 // -U
	ChangeUpdateAfter  ChangeType = 3 // +U
	ChangeDelete       ChangeType = 4 // -D
)

var changeTypeShort = [...]string{
	ChangeAppendOnly:   "+A",
	ChangeInsert:       "+I",
	ChangeUpdateBefore: "-U",
	ChangeUpdateAfter:  "+U",
	ChangeDelete:       "-D",
}

// changeTypeLong are the values of t$changelog's _change_type column: an
// append is an insert there, as in Fluss's ChangelogRowConverter.
var changeTypeLong = [...]string{
	ChangeAppendOnly:   "insert",
	ChangeInsert:       "insert",
	ChangeUpdateBefore: "update_before",
	ChangeUpdateAfter:  "update_after",
	ChangeDelete:       "delete",
}

// Valid reports whether c is one of the five change types.
func (c ChangeType) Valid() bool { return int(c) < len(changeTypeShort) }

// String returns Fluss's short form: +A, +I, -U, +U or -D.
func (c ChangeType) String() string {
	if !c.Valid() {
		return fmt.Sprintf("ChangeType(%d)", byte(c))
	}
	return changeTypeShort[c]
}

// ChangelogName returns Fluss's long name of c, the value t$changelog
// shows: insert (also for +A), update_before, update_after or delete.
func (c ChangeType) ChangelogName() string {
	if !c.Valid() {
		return c.String()
	}
	return changeTypeLong[c]
}

// IsRetraction reports whether c takes a row away (-U or -D): a fold of a
// key's changes that ends in one leaves no row for the key.
func (c ChangeType) IsRetraction() bool {
	return c == ChangeUpdateBefore || c == ChangeDelete
}
