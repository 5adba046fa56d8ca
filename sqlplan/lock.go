package sqlplan

// LockMode is the locking clause of a SELECT: FOR UPDATE, or LOCK IN
// SHARE MODE and its newer spelling FOR SHARE. Fluss takes no lock: in a
// transaction the primary keys of the rows a locking SELECT returns from
// primary-key tables join the transaction's conflict check, as if written
// (see the root package's Tx); outside one it is a plain read.
type LockMode uint8

const (
	// LockNone is a SELECT without a locking clause.
	LockNone LockMode = iota
	// LockForUpdate is FOR UPDATE.
	LockForUpdate
	// LockShare is LOCK IN SHARE MODE or FOR SHARE.
	LockShare
)

func (m LockMode) String() string {
	switch m {
	case LockForUpdate:
		return "FOR UPDATE"
	case LockShare:
		return "LOCK IN SHARE MODE"
	}
	return ""
}

// cutLockClause splits the locking clause off the end of a query:
// FOR UPDATE, FOR SHARE or LOCK IN SHARE MODE, then an optional ';'. It
// returns the text and tokens before the clause (ending in a tokEOF token
// where the clause began) and the mode; a query without one comes back
// as it is, with LockNone. Only the clause that ends the whole statement
// is cut: one inside a subquery or before a set operation stays for the
// SELECT parser, which refuses it there.
func cutLockClause(src string, toks []token) (string, []token, LockMode) {
	n := len(toks) - 1 // toks[n] is tokEOF
	if n > 0 && isPunct(toks[n-1], ";") {
		n--
	}
	words := func(kws ...string) bool {
		if n < len(kws) {
			return false
		}
		for i, kw := range kws {
			if !isWord(toks[n-len(kws)+i], kw) {
				return false
			}
		}
		return true
	}
	var mode LockMode
	var k int
	switch {
	case words("FOR", "UPDATE"):
		mode, k = LockForUpdate, 2
	case words("FOR", "SHARE"):
		mode, k = LockShare, 2
	case words("LOCK", "IN", "SHARE", "MODE"):
		mode, k = LockShare, 4
	default:
		return src, toks, LockNone
	}
	start := toks[n-k].pos
	return src[:start], window(toks, 0, n-k, start), mode
}
