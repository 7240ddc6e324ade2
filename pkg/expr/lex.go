package expr

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokKind says what a token is; punctuation and operators are tokPunct with
// their text.
type tokKind uint8

const (
	tokEOF     tokKind = iota
	tokIdent           // a name, reserved words included
	tokInt             // decimal or hex digits; the parser folds a '-' in
	tokFloat           // digits with a fraction or an exponent
	tokLiteral         // uint, string, bytes, true, false or null, decoded in val
	tokQuoted          // a field name in backquotes, such as `content-type`
	tokPunct
)

type token struct {
	kind tokKind
	off  int
	text string
	val  any
}

// lexer splits a source into tokens, failing on the first bad one.
type lexer struct {
	src string
	off int
}

func (l *lexer) fail(off int, format string, args ...any) {
	panic(syntaxError(l.src, off, fmt.Sprintf(format, args...)))
}

func syntaxError(src string, off int, msg string) *Error {
	line, col := position(src, off)
	return &Error{Line: line, Column: col, Message: "Syntax error: " + msg}
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
func isHex(c byte) bool    { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func (l *lexer) at(i int) byte {
	if i < len(l.src) {
		return l.src[i]
	}
	return 0
}

// next returns the next token, skipping spaces and // comments.
func (l *lexer) next() token {
	s := l.src
	for l.off < len(s) {
		switch c := s[l.off]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f':
			l.off++
		case c == '/' && l.at(l.off+1) == '/':
			for l.off < len(s) && s[l.off] != '\n' {
				l.off++
			}
		default:
			return l.token()
		}
	}
	return token{kind: tokEOF, off: len(s)}
}

func (l *lexer) token() token {
	s, start := l.src, l.off
	c := s[start]
	tok := func(k tokKind, end int, val any) token {
		l.off = end
		return token{kind: k, off: start, text: s[start:end], val: val}
	}
	switch {
	case isDigit(c) || c == '.' && isDigit(l.at(start+1)):
		return l.number()
	case isLetter(c):
		end := start + 1
		for end < len(s) && (isLetter(s[end]) || isDigit(s[end])) {
			end++
		}
		word := s[start:end]
		if q := l.at(end); q == '"' || q == '\'' {
			// r"raw", b"bytes" and br"raw bytes", in either case.
			raw := word == "r" || word == "R"
			isBytes := word[0] == 'b' || word[0] == 'B'
			if len(word) == 2 && isBytes && (word[1] == 'r' || word[1] == 'R') {
				raw = true
			} else if len(word) > 1 {
				isBytes = false
			}
			if raw || isBytes {
				return l.quoted(end, raw, isBytes)
			}
		}
		switch word {
		case "true", "false":
			return tok(tokLiteral, end, word == "true")
		case "null":
			return tok(tokLiteral, end, nil)
		case "in":
			return tok(tokPunct, end, nil)
		}
		return tok(tokIdent, end, nil)
	case c == '"' || c == '\'':
		return l.quoted(start, false, false)
	case c == '`':
		end := start + 1
		for end < len(s) && (isLetter(s[end]) || isDigit(s[end]) || strings.IndexByte(".-/ ", s[end]) >= 0) {
			end++
		}
		if end == start+1 || l.at(end) != '`' {
			l.fail(start, "a name in backquotes may hold only letters, digits and _ . - / or space")
		}
		return tok(tokQuoted, end+1, s[start+1:end])
	}
	if two := s[start:min(start+2, len(s))]; len(two) == 2 && strings.Contains(" == != <= >= && || ", " "+two+" ") {
		return tok(tokPunct, start+2, nil)
	}
	if strings.IndexByte("<>!-+*/%?:.,()[]{}", c) >= 0 {
		return tok(tokPunct, start+1, nil)
	}
	r, _ := utf8.DecodeRuneInString(s[start:])
	l.fail(start, "unexpected character %q", r)
	return token{}
}

// number lexes an int, uint or double as CEL's grammar does: the longest
// match, so that "1e" is the int 1 followed by the name e.
func (l *lexer) number() token {
	s, start := l.src, l.off
	digits := func(i int, ok func(byte) bool) int {
		for i < len(s) && ok(s[i]) {
			i++
		}
		return i
	}
	end, kind := start, tokInt
	if s[start] == '0' && l.at(start+1) == 'x' && isHex(l.at(start+2)) {
		end = digits(start+2, isHex)
	} else {
		end = digits(start, isDigit)
		if l.at(end) == '.' && isDigit(l.at(end+1)) {
			end, kind = digits(end+1, isDigit), tokFloat
		}
		if e := l.at(end); e == 'e' || e == 'E' {
			i := end + 1
			if l.at(i) == '+' || l.at(i) == '-' {
				i++
			}
			if isDigit(l.at(i)) {
				end, kind = digits(i, isDigit), tokFloat
			}
		}
	}
	t := token{kind: kind, off: start, text: s[start:end]}
	if u := l.at(end); kind == tokInt && (u == 'u' || u == 'U') {
		t.kind, t.val = tokLiteral, parseUint(t.text)
		if t.val == nil {
			l.fail(start, "invalid uint literal %s", s[start:end+1])
		}
		end++
		t.text = s[start:end]
	}
	l.off = end
	return t
}

// quoted lexes a string or bytes literal whose quotes start at q and
// decodes it.
func (l *lexer) quoted(q int, raw, isBytes bool) token {
	s, start := l.src, l.off
	quote := s[q : q+1]
	if strings.HasPrefix(s[q:], quote+quote+quote) {
		quote = s[q : q+3]
	}
	var b []byte
	i := q + len(quote)
	for {
		if i >= len(s) || len(quote) == 1 && (s[i] == '\n' || s[i] == '\r') {
			l.fail(start, "unterminated string")
		}
		if strings.HasPrefix(s[i:], quote) {
			break
		}
		c := s[i]
		switch {
		case c == '\r' && len(quote) == 3:
			// Line ends in long strings read as "\n", whatever the source used.
			if l.at(i+1) == '\n' {
				i++
			}
			b = append(b, '\n')
			i++
		case c >= utf8.RuneSelf:
			// A byte that is not UTF-8 reads as U+FFFD, as CEL reads the
			// source as Unicode text.
			r, n := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r)
			i += n
		case c != '\\' || raw:
			b = append(b, c)
			i++
		default:
			i = l.escape(&b, i, isBytes)
		}
	}
	l.off = i + len(quote)
	t := token{kind: tokLiteral, off: start, text: s[start:l.off], val: string(b)}
	if isBytes {
		t.val = b
	}
	return t
}

// escape decodes the escape sequence at s[i] onto b and returns the offset
// after it.
func (l *lexer) escape(b *[]byte, i int, isBytes bool) int {
	s := l.src
	c := l.at(i + 1)
	if j := strings.IndexByte(`abfnrtv\'"?`+"`", c); j >= 0 {
		*b = append(*b, "\a\b\f\n\r\t\v\\'\"?`"[j])
		return i + 2
	}
	from, n, base := i+2, 0, 16 // the digits are s[from:end]
	switch c {
	case 'x', 'X':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	case '0', '1', '2', '3':
		from, n, base = i+1, 3, 8
	}
	end := from + n
	if n == 0 || n > 3 && isBytes || end > len(s) {
		l.fail(i, "invalid escape sequence %s", s[i:min(i+2, len(s))])
	}
	var v rune
	for _, d := range []byte(s[from:end]) {
		x := strings.IndexByte("0123456789abcdef"[:base], d|0x20)
		if x < 0 || d < '0' { // d|0x20 folds case, and would take control characters for digits
			l.fail(i, "invalid escape sequence %s", s[i:end])
		}
		v = v*rune(base) + rune(x)
	}
	switch {
	case isBytes:
		*b = append(*b, byte(v))
	case !utf8.ValidRune(v):
		l.fail(i, "invalid Unicode code point %s", s[i:end])
	default:
		*b = utf8.AppendRune(*b, v)
	}
	return end
}
