package sqlplan

import (
	"strings"
)

// tokKind classifies a token of the lexer shared by the DDL grammar and the
// placeholder pass that runs before xwb1989/sqlparser.
type tokKind uint8

const (
	tokEOF         tokKind = iota
	tokIdent               // plain identifier or keyword
	tokQuotedIdent         // `identifier`
	tokString              // 'text' or "text"
	tokNumber              // 12, 1.5, .5, 1e3
	tokParam               // ?, $N or :name
	tokPunct               // operators and punctuation
)

// token is one lexeme. text is the identifier (unquoted), the string's
// value (unescaped), the number or the punctuation; pos and end delimit
// the source bytes.
type token struct {
	kind     tokKind
	text     string
	pos, end int
}

// lexer splits SQL text into tokens. In mysql mode it follows
// xwb1989/sqlparser's rules (backslash escapes in strings; '#', '--' and
// '//' comments; '$' inside identifiers), so that the placeholder pass sees
// strings and comments exactly as the parser will. Otherwise it follows
// Flink's DDL rules: a quote inside a string is doubled, backslashes are
// literal.
type lexer struct {
	src   string
	pos   int
	mysql bool
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (l *lexer) errorAt(pos int, msg string) error {
	near := ""
	if pos < len(l.src) {
		end := pos + 1
		for end < len(l.src) && end-pos < 10 && l.src[end] > ' ' {
			end++
		}
		near = l.src[pos:end]
	}
	return &SyntaxError{Pos: pos, Near: near, Msg: msg}
}

// skip moves past white space and comments.
func (l *lexer) skip() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '-' && strings.HasPrefix(l.src[l.pos:], "--"),
			l.mysql && c == '#',
			l.mysql && c == '/' && strings.HasPrefix(l.src[l.pos:], "//"):
			nl := strings.IndexByte(l.src[l.pos:], '\n')
			if nl < 0 {
				l.pos = len(l.src)
			} else {
				l.pos += nl + 1
			}
		case strings.HasPrefix(l.src[l.pos:], "/*!"):
			// MySQL runs the text of a version comment as SQL, and
			// xwb1989/sqlparser would too (it fails on some, such as
			// /*!0*/), while this lexer and every pass over its tokens
			// would skip it: refuse it rather than read two different
			// statements. A DDL statement gets the same answer, so a
			// dump's /*!50100 PARTITION BY ... */ is not dropped unseen.
			return l.errorAt(l.pos, "MySQL version comments /*! ... */ are not supported (write the SQL without the comment)")
		case c == '/' && strings.HasPrefix(l.src[l.pos:], "/*"):
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return l.errorAt(l.pos, "unterminated comment")
			}
			l.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

// next returns the next token; at the end it returns a tokEOF token at
// len(src).
func (l *lexer) next() (token, error) {
	if err := l.skip(); err != nil {
		return token{}, err
	}
	start := l.pos
	if start >= len(l.src) {
		return token{kind: tokEOF, pos: start, end: start}, nil
	}
	c := l.src[start]
	switch {
	case isIdentStart(c) || l.mysql && c == '@':
		l.pos++
		for l.pos < len(l.src) {
			d := l.src[l.pos]
			if isIdentStart(d) || isDigit(d) || l.mysql && (d == '@' || d == '$') {
				l.pos++
				continue
			}
			break
		}
		return token{kind: tokIdent, text: l.src[start:l.pos], pos: start, end: l.pos}, nil
	case isDigit(c) || c == '.' && start+1 < len(l.src) && isDigit(l.src[start+1]):
		return l.number(), nil
	case c == '`':
		return l.quoted('`', tokQuotedIdent)
	case c == '\'' || c == '"':
		return l.quoted(c, tokString)
	case c == '?':
		l.pos++
		return token{kind: tokParam, text: "?", pos: start, end: l.pos}, nil
	case c == '$' && start+1 < len(l.src) && isDigit(l.src[start+1]):
		l.pos++
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tokParam, text: l.src[start:l.pos], pos: start, end: l.pos}, nil
	case c == ':' && start+1 < len(l.src) && (isIdentStart(l.src[start+1]) || l.src[start+1] == '@'):
		l.pos++
		for l.pos < len(l.src) {
			d := l.src[l.pos]
			if isIdentStart(d) || isDigit(d) || d == '@' || d == '.' {
				l.pos++
				continue
			}
			break
		}
		return token{kind: tokParam, text: l.src[start:l.pos], pos: start, end: l.pos}, nil
	}
	for _, op := range [...]string{"<=>", "<=", ">=", "<>", "!=", "::", "||", "&&"} {
		if strings.HasPrefix(l.src[start:], op) {
			l.pos += len(op)
			return token{kind: tokPunct, text: op, pos: start, end: l.pos}, nil
		}
	}
	if strings.IndexByte("()[],.;=<>+-*/%!~^&|:{}", c) >= 0 {
		l.pos++
		return token{kind: tokPunct, text: l.src[start:l.pos], pos: start, end: l.pos}, nil
	}
	return token{}, l.errorAt(start, "unexpected character")
}

func (l *lexer) number() token {
	start := l.pos
	for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
		l.pos++
	}
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		l.pos++
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
		}
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		p := l.pos + 1
		if p < len(l.src) && (l.src[p] == '+' || l.src[p] == '-') {
			p++
		}
		if p < len(l.src) && isDigit(l.src[p]) {
			for p < len(l.src) && isDigit(l.src[p]) {
				p++
			}
			l.pos = p
		}
	}
	return token{kind: tokNumber, text: l.src[start:l.pos], pos: start, end: l.pos}
}

// quoted scans a string or backquoted identifier starting at l.pos. A
// doubled quote stands for itself; in mysql mode a backslash escapes the
// next byte in strings.
func (l *lexer) quoted(q byte, kind tokKind) (token, error) {
	start := l.pos
	l.pos++
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == q:
			if l.pos+1 < len(l.src) && l.src[l.pos+1] == q {
				b.WriteByte(q)
				l.pos += 2
				continue
			}
			l.pos++
			return token{kind: kind, text: b.String(), pos: start, end: l.pos}, nil
		case c == '\\' && l.mysql && kind == tokString:
			if l.pos+1 >= len(l.src) {
				l.pos++
				continue
			}
			b.WriteByte(unescape(l.src[l.pos+1]))
			l.pos += 2
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
	what := "string"
	if kind == tokQuotedIdent {
		what = "quoted identifier"
	}
	return token{}, l.errorAt(start, "unterminated "+what)
}

// unescape maps the byte after a backslash as MySQL does.
func unescape(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 26
	}
	return c
}

// lexAll splits src into tokens, ending with the tokEOF token.
func lexAll(src string, mysql bool) ([]token, error) {
	l := &lexer{src: src, mysql: mysql}
	var toks []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == tokEOF {
			return toks, nil
		}
	}
}
