package sqlplan

import "strings"

// xwb1989/sqlparser knows DISTINCT as a set quantifier but not its
// default, ALL: it refuses SELECT ALL x and COUNT(ALL x), which MySQL and
// SQLite accept and which mean SELECT x and COUNT(x). The token is found
// here, in the tokens the placeholder pass already has, and dropped before
// the parser sees the text; positions map back through the edit, so an
// error later in the statement still points at its place in the caller's
// text. Everywhere else ALL is left to the parser (UNION ALL is its own),
// but for x op ALL (SELECT ...), which subquery.go rewrites.

// setQuantifier reports whether toks[i], an ALL, is the set quantifier of
// a SELECT (right after SELECT; a hint comment between them is not a
// token) or of an aggregate call (right after the opening parenthesis of
// an unqualified COUNT, SUM, AVG, MIN or MAX, as MySQL's grammar allows
// it only there). A quoted `all` is a name and never gets here.
func setQuantifier(toks []token, i int) bool {
	if i == 0 {
		return false
	}
	prev := toks[i-1]
	if prev.kind == tokIdent && strings.EqualFold(prev.text, "SELECT") {
		return true
	}
	if prev.kind != tokPunct || prev.text != "(" || i < 2 {
		return false
	}
	fn := toks[i-2]
	if fn.kind != tokIdent || !aggregates[strings.ToLower(fn.text)] {
		return false
	}
	return i < 3 || toks[i-3].kind != tokPunct || toks[i-3].text != "."
}

// dropQuantifier returns the edit that removes the set quantifier
// toks[i] from the text the parser sees, or an error where what follows
// it cannot follow a quantifier: DISTINCT (ALL and DISTINCT contradict
// each other; MySQL refuses the pair too), or the end of an argument list,
// which the parser would otherwise read as a call without arguments.
func dropQuantifier(text string, toks []token, i int) (edit, error) {
	t, next := toks[i], toks[i+1]
	switch {
	case next.kind == tokIdent && strings.EqualFold(next.text, "DISTINCT"):
		return edit{}, &SyntaxError{Pos: next.pos, Near: text[next.pos:next.end],
			Msg: "ALL and DISTINCT cannot both be given"}
	case next.kind == tokPunct && (next.text == ")" || next.text == ","):
		return edit{}, &SyntaxError{Pos: next.pos, Near: text[next.pos:next.end],
			Msg: "expected an expression after ALL"}
	}
	// The comments between ALL and the next token go with it: the parser
	// reads a comment right after SELECT as its hint, and one written
	// after ALL is not (as after DISTINCT, or in MySQL).
	return edit{pos: t.pos, end: next.pos}, nil
}
