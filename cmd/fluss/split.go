package main

import (
	"strings"
	"unicode"
)

// splitStatements cuts text at the semicolons that end statements: a
// semicolon inside a string literal ('...' or "..."), a quoted identifier
// (`...`) or a comment (-- to the end of the line, /* ... */) ends
// nothing. It returns the complete statements, trimmed and without their
// semicolon, and the unfinished rest of text. Statements holding nothing
// but blanks and comments are dropped.
func splitStatements(text string) (stmts []string, rest string) {
	start := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '\'', '"', '`':
			i = skipQuoted(text, i)
		case '-':
			if i+1 < len(text) && text[i+1] == '-' {
				i = skipLineComment(text, i)
			}
		case '/':
			if i+1 < len(text) && text[i+1] == '*' {
				i = skipBlockComment(text, i)
			}
		case ';':
			if s := strings.TrimSpace(text[start:i]); !blank(s) {
				stmts = append(stmts, s)
			}
			start = i + 1
		}
	}
	return stmts, text[start:]
}

// skipQuoted returns the index of the quote closing the literal or quoted
// identifier that opens at i, or the last index of text when it is not
// closed yet. A doubled quote stands for itself; in string literals a
// backslash escapes the next byte, as MySQL reads them.
func skipQuoted(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j
		}
	}
	return len(text) - 1
}

func skipLineComment(text string, i int) int {
	if n := strings.IndexByte(text[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(text) - 1
}

func skipBlockComment(text string, i int) int {
	if n := strings.Index(text[i+2:], "*/"); n >= 0 {
		return i + 2 + n + 1
	}
	return len(text) - 1
}

// skipBlanks returns the index of the first byte of text at or after i
// that is neither white space nor inside a comment.
func skipBlanks(text string, i int) int {
	for i < len(text) {
		switch {
		case unicode.IsSpace(rune(text[i])):
			i++
		case strings.HasPrefix(text[i:], "--"):
			i = skipLineComment(text, i) + 1
		case strings.HasPrefix(text[i:], "/*") && !strings.HasPrefix(text[i:], "/*+"):
			i = skipBlockComment(text, i) + 1
		default:
			return i
		}
	}
	return len(text)
}

// blank reports whether s holds nothing but white space and comments.
func blank(s string) bool { return skipBlanks(s, 0) == len(s) }

// firstKeyword is the statement's first word, upper-cased, after leading
// blanks and comments: what decides whether it returns rows.
func firstKeyword(s string) string {
	i := skipBlanks(s, 0)
	// A query in parentheses, (SELECT ...) UNION (SELECT ...), is a SELECT.
	for i < len(s) && s[i] == '(' {
		i = skipBlanks(s, i+1)
	}
	j := i
	for j < len(s) && (s[j] == '_' || unicode.IsLetter(rune(s[j]))) {
		j++
	}
	return strings.ToUpper(s[i:j])
}

// returnsRows reports whether a statement starting with keyword kw
// answers with rows (and is run with Query rather than Exec).
func returnsRows(kw string) bool {
	switch kw {
	case "SELECT", "EXPLAIN", "SHOW", "DESCRIBE", "DESC", "CALL", "WITH", "VALUES":
		return true
	}
	return false
}
