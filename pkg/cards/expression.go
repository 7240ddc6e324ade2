package cards

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file parses the expressions of the Adaptive Cards Template Language:
// Microsoft's adaptive expressions, as the adaptive-expressions npm package
// reads them (its ANTLR grammar, ExpressionAntlrLexer.g4 and
// ExpressionAntlrParser.g4), including the operators' odd precedence:
// comparisons bind looser than == and the string operator &.

// maxDepth bounds the nesting of an expression, so that parsing and
// evaluating it cannot exhaust the stack.
const maxDepth = 64

// maxChain bounds a run of operators of one precedence, a + b + c ...,
// each of which nests the expression one level deeper.
const maxChain = 256

// returnType is what an expression may yield, as a set; the parser uses it
// to refuse calls such as toUpper(1) before anything runs.
type returnType int

const (
	rtBoolean returnType = 1 << iota
	rtNumber
	rtObject // anything: the value is known only when evaluated
	rtString
	rtArray
)

// Names of the expression kinds that are not calls of named functions.
const (
	opConstant = "Constant"
	opAccessor = "Accessor"
	opElement  = "Element"
)

// expr is a parsed expression: a constant, a property access, an index
// access or a call of a function with arguments.
type expr struct {
	op   string
	fn   *function // nil for constants
	args []*expr
	val  any // constants only
}

func constant(v any) *expr { return &expr{op: opConstant, val: v} }

func (e *expr) returnType() returnType {
	if e.op != opConstant {
		return e.fn.ret
	}
	switch e.val.(type) {
	case string:
		return rtString
	case float64:
		return rtNumber
	case bool:
		return rtBoolean
	case []any:
		return rtArray
	}
	return rtObject
}

// String writes the expression the way adaptive-expressions does: a binding
// that fails inside a longer string is left in the output as ${ String() }.
func (e *expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e *expr) write(b *strings.Builder) {
	switch e.op {
	case opConstant:
		b.WriteString(constantString(e.val))
		return
	case opAccessor:
		if len(e.args) == 2 {
			e.args[1].write(b)
			b.WriteByte('.')
		}
		b.WriteString(e.args[0].val.(string))
		return
	case opElement:
		e.args[0].write(b)
		b.WriteByte('[')
		e.args[1].write(b)
		b.WriteByte(']')
		return
	}
	c, _ := utf8.DecodeRuneInString(e.op)
	infix := !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') && len(e.args) >= 2
	if !infix {
		b.WriteString(e.op)
	}
	b.WriteByte('(')
	for i, a := range e.args {
		if i > 0 {
			if infix {
				b.WriteString(" " + e.op + " ")
			} else {
				b.WriteString(", ")
			}
		}
		a.write(b)
	}
	b.WriteByte(')')
}

func constantString(v any) string {
	switch x := v.(type) {
	case undefinedValue:
		return "undefined"
	case nil:
		return "null"
	case string:
		x = strings.ReplaceAll(x, `\`, `\\`)
		var b strings.Builder
		for i := 0; i < len(x); i++ {
			if x[i] == '\'' && (i == 0 || x[i-1] != '\\') {
				b.WriteByte('\\')
			}
			b.WriteByte(x[i])
		}
		return "'" + b.String() + "'"
	case []any, map[string]any:
		return jsonStringify(x)
	}
	return toJSString(v)
}

// ParseError is a ${...} expression that does not parse.
type ParseError struct {
	Expression string // the text that failed
	Message    string
}

func (e *ParseError) Error() string {
	text := e.Expression
	if r := []rune(text); len(r) > 80 {
		text = string(r[:80]) + "…"
	}
	return fmt.Sprintf("%s in %q", e.Message, text)
}

// Token kinds of the lexer.
const (
	tEOF = iota
	tOp
	tNumber
	tString
	tIdent
	tInterp // a `...` string interpolation, text kept raw
)

type token struct {
	kind int
	text string
	pos  int
}

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
}

// parseExpression parses one adaptive expression.
func parseExpression(src string, depth int) (*expr, error) {
	if depth > maxDepth {
		return nil, &ParseError{src, "expression nests too deeply"}
	}
	if src == "" {
		return constant(""), nil
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks, depth: depth}
	e, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errorf(t, "unexpected %q", t.text)
	}
	return e, nil
}

func (p *parser) errorf(t token, format string, args ...any) error {
	return &ParseError{p.src, fmt.Sprintf("syntax error at character %d: ", t.pos+1) + fmt.Sprintf(format, args...)}
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(text string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == text
}

func (p *parser) expect(text string) error {
	if !p.isOp(text) {
		t := p.peek()
		if t.kind == tEOF {
			return p.errorf(t, "missing %q at the end", text)
		}
		return p.errorf(t, "expected %q, found %q", text, t.text)
	}
	p.next()
	return nil
}

// Binary operators by precedence level, loosest first; level 0 is the
// conditional a ? b : c.
var binaryLevels = [][]string{
	1: {"??"},
	2: {"||"},
	3: {"&&"},
	4: {"<", "<=", ">", ">="},
	5: {"&"},
	6: {"==", "!=", "<>"},
	7: {"+", "-"},
	8: {"*", "/", "%"},
	9: {"^"},
}

// operatorFunctions maps operators to the functions they call.
var operatorFunctions = map[string]string{
	"??": "coalesce", "||": "or", "&&": "and", "<": "less", "<=": "lessOrEquals", ">": "greater",
	">=": "greaterOrEquals", "&": "concat", "==": "equals", "!=": "!=",
	"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "^": "exp", "!": "not",
	// The lexer knows <> but no function carries the name: it parses, and
	// fails when evaluated, in the npm package as here.
	"<>": "<>",
}

func (p *parser) expression(level int) (*expr, error) {
	if level == 0 {
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxDepth {
			return nil, p.errorf(p.peek(), "expression nests too deeply")
		}
		cond, err := p.expression(1)
		if err != nil {
			return nil, err
		}
		for p.isOp("?") {
			p.next()
			yes, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			no, err := p.expression(1)
			if err != nil {
				return nil, err
			}
			if cond, err = call("if", cond, yes, no); err != nil {
				return nil, err
			}
		}
		return cond, nil
	}
	if level >= len(binaryLevels) {
		return p.unary()
	}
	left, err := p.expression(level + 1)
	if err != nil {
		return nil, err
	}
	// Each operator nests the expression built so far one level deeper.
	for chain := 0; ; chain++ {
		t := p.peek()
		if t.kind != tOp || !contains(binaryLevels[level], t.text) {
			return left, nil
		}
		if chain >= maxChain {
			return nil, p.errorf(t, "more than %d operators in a row", maxChain)
		}
		p.next()
		next := level + 1
		if t.text == "^" {
			next = level // right associative
		}
		right, err := p.expression(next)
		if err != nil {
			return nil, err
		}
		if left, err = call(operatorFunctions[t.text], left, right); err != nil {
			return nil, err
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) unary() (*expr, error) {
	t := p.peek()
	if t.kind == tOp && (t.text == "!" || t.text == "-" || t.text == "+") {
		p.next()
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxDepth {
			return nil, p.errorf(t, "expression nests too deeply")
		}
		operand, err := p.unary()
		if err != nil {
			return nil, err
		}
		if t.text == "!" {
			return call("not", operand)
		}
		return call(operatorFunctions[t.text], constant(0.0), operand)
	}
	return p.primary()
}

func (p *parser) primary() (*expr, error) {
	start := p.i
	e, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("."):
			p.next()
			t := p.next()
			if t.kind != tIdent {
				return nil, p.errorf(t, "expected a property name after \".\"")
			}
			e = &expr{op: opAccessor, fn: accessorFunction, args: []*expr{constant(t.text), e}}
		case p.isOp("("), p.isOp("!") && p.toks[p.i+1].kind == tOp && p.toks[p.i+1].text == "(":
			name := p.text(start, p.i)
			if p.isOp("!") {
				p.next()
				name += "!"
			}
			p.next()
			args, err := p.args(")")
			if err != nil {
				return nil, err
			}
			if e, err = call(name, args...); err != nil {
				return nil, err
			}
		case p.isOp("["):
			p.next()
			index, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			e = &expr{op: opElement, fn: elementFunction, args: []*expr{e, index}}
		default:
			return e, nil
		}
	}
}

// text is the source of tokens [from, to) with the spaces between them
// removed, which is how ANTLR spells a function name such as a.b.
func (p *parser) text(from, to int) string {
	var b strings.Builder
	for _, t := range p.toks[from:to] {
		b.WriteString(t.text)
	}
	return b.String()
}

func (p *parser) args(closing string) ([]*expr, error) {
	var args []*expr
	if p.isOp(closing) {
		p.next()
		return args, nil
	}
	for {
		if t := p.peek(); t.kind == tIdent && p.toks[p.i+1].kind == tOp && p.toks[p.i+1].text == "=>" {
			p.next()
			p.next()
			body, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			args = append(args, &expr{op: opAccessor, fn: accessorFunction, args: []*expr{constant(t.text)}}, body)
		} else {
			a, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
		}
		if p.isOp(",") {
			p.next()
			continue
		}
		return args, p.expect(closing)
	}
}

func (p *parser) atom() (*expr, error) {
	t := p.next()
	switch t.kind {
	case tNumber:
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, p.errorf(t, "%s is not a number", t.text)
		}
		return constant(f), nil
	case tString:
		return constant(unquote(t.text)), nil
	case tIdent:
		switch t.text {
		case "true":
			return constant(true), nil
		case "false":
			return constant(false), nil
		case "null":
			return constant(nil), nil
		case "undefined":
			return constant(undefined), nil
		}
		return &expr{op: opAccessor, fn: accessorFunction, args: []*expr{constant(t.text)}}, nil
	case tInterp:
		return parseInterpolation(t.text, p.depth+1)
	case tOp:
		switch t.text {
		case "(":
			e, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			return e, p.expect(")")
		case "[":
			args, err := p.args("]")
			if err != nil {
				return nil, err
			}
			return call("createArray", args...)
		case "{":
			return p.object()
		}
	case tEOF:
		return nil, p.errorf(t, "the expression ends too early")
	}
	return nil, p.errorf(t, "unexpected %q", t.text)
}

// object parses {key: value, ...}, which adaptive-expressions builds as
// setProperty calls on json('{}').
func (p *parser) object() (*expr, error) {
	obj, err := call("json", constant("{}"))
	if err != nil {
		return nil, err
	}
	if p.isOp("}") {
		p.next()
		return obj, nil
	}
	for {
		k := p.next()
		var key string
		switch k.kind {
		case tIdent:
			key = k.text
		case tString:
			key = k.text[1 : len(k.text)-1]
		default:
			return nil, p.errorf(k, "expected a property name, found %q", k.text)
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		if obj, err = call("setProperty", obj, constant(key), v); err != nil {
			return nil, err
		}
		if p.isOp(",") {
			p.next()
			continue
		}
		return obj, p.expect("}")
	}
}

// unquote reads a string literal: the quote escaped by a backslash, and
// \r, \n, \t and \\; any other backslash stays as written.
func unquote(lit string) string {
	q := lit[0]
	s := lit[1 : len(lit)-1]
	s = strings.ReplaceAll(s, `\`+string(q), string(q))
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) || s[i+1] == '\r' || s[i+1] == '\n' {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case 'r':
			b.WriteByte('\r')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\':
			b.WriteByte('\\')
		default:
			b.WriteString(s[i : i+2])
		}
		i++
	}
	return b.String()
}

var operators = []string{"==", "!=", "<>", "&&", "||", "<=", ">=", "=>", "??",
	"+", "-", "!", "^", "*", "/", "%", "&", "<", ">", "(", ")", ".", "[", "]", "{", "}", ",", ":", "?"}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case strings.HasPrefix(src[i:], "\ufeff"), strings.HasPrefix(src[i:], "\u00a0"):
			_, n := utf8.DecodeRuneInString(src[i:])
			i += n
			continue
		case isDigit(c):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			if j+1 < len(src) && src[j] == '.' && isDigit(src[j+1]) {
				j++
				for j < len(src) && isDigit(src[j]) {
					j++
				}
			}
			toks = append(toks, token{tNumber, src[i:j], i})
			i = j
			continue
		case c == '\'' || c == '"':
			j, ok := scanStringLiteral(src, i)
			if !ok {
				return nil, &ParseError{src, fmt.Sprintf("syntax error at character %d: the string is not closed", i+1)}
			}
			toks = append(toks, token{tString, src[i:j], i})
			i = j
			continue
		case c == '`':
			j, ok := scanInterpolation(src, i)
			if !ok {
				return nil, &ParseError{src, fmt.Sprintf("syntax error at character %d: the ` string is not closed", i+1)}
			}
			toks = append(toks, token{tInterp, src[i+1 : j], i})
			i = j + 1
			continue
		}
		if n := identLength(src[i:]); n > 0 {
			// A lone % is the operator: the operators come first in the grammar.
			if !(n == 1 && c == '%') {
				toks = append(toks, token{tIdent, src[i : i+n], i})
				i += n
				continue
			}
		}
		matched := false
		for _, op := range operators {
			if strings.HasPrefix(src[i:], op) {
				toks = append(toks, token{tOp, op, i})
				i += len(op)
				matched = true
				break
			}
		}
		if !matched {
			r, _ := utf8.DecodeRuneInString(src[i:])
			return nil, &ParseError{src, fmt.Sprintf("syntax error at character %d: unexpected %q", i+1, r)}
		}
	}
	return append(toks, token{tEOF, "", len(src)}), nil
}

// identLength is the length of the identifier at the start of s, or 0.
func identLength(s string) int {
	n := 0
	switch {
	case strings.HasPrefix(s, "@@"):
		n = 2
	case len(s) > 0 && (isLetter(s[0]) || strings.IndexByte("_#@$%", s[0]) >= 0):
		n = 1
	default:
		return 0
	}
	for n < len(s) && (isLetter(s[n]) || isDigit(s[n]) || s[n] == '_') {
		n++
	}
	return n
}

// scanInterpolation finds the backtick that closes the string interpolation
// opened at src[start].
func scanInterpolation(src string, start int) (int, bool) {
	i := start + 1
	for i < len(src) {
		switch {
		case src[i] == '`':
			return i, true
		case src[i] == '\\' && i+1 < len(src) && (src[i+1] == '`' || src[i+1] == '$'):
			i += 2
		case strings.HasPrefix(src[i:], "${"):
			if end, ok := scanTemplate(src, i); ok {
				i = end
			} else {
				i++
			}
		default:
			i++
		}
	}
	return 0, false
}

// The lexer of adaptive expressions is ANTLR's: of the ways a token rule
// can match, it takes the longest. A string literal, a TEMPLATE token
// ("${" ... "}") and the object literals inside one can each end in
// several places (a backslash before a quote may or may not escape it), so
// the functions below collect every place and pick the last.

// maxScan bounds how far a "${" looks for its "}", so that text full of
// "${" takes linear time to read.
const maxScan = 10000

// scanStringLiteral returns the end of the longest string literal opening
// at s[start]: quotes escaped as \' (or \"), backslashes as \\.
func scanStringLiteral(s string, start int) (int, bool) {
	ends := stringEnds(s, start)
	if len(ends) == 0 {
		return 0, false
	}
	return ends[len(ends)-1], true
}

// stringEnds returns, in ascending order, every position after a closing
// quote that a string literal opening at s[start] can reach.
func stringEnds(s string, start int) []int {
	q := s[start]
	limit := min(len(s), start+maxScan)
	reach := make([]bool, limit+2)
	reach[start+1] = true
	var ends []int
	for i := start + 1; i < limit; i++ {
		if !reach[i] {
			continue
		}
		if s[i] == q {
			ends = append(ends, i+1)
			continue
		}
		reach[i+1] = true
		if s[i] == '\\' && i+1 < limit && (s[i+1] == q || s[i+1] == '\\') {
			reach[i+2] = true
		}
	}
	return ends
}

// templateChar tells whether c may stand in a TEMPLATE token by itself.
func templateChar(c byte) bool { return !strings.ContainsRune("\r\n{}'\"`", rune(c)) }

// scanTemplate matches the lexer's TEMPLATE token at s[start:], "${", one
// or more string literals, object literals or other characters but
// newlines, braces, quotes and backticks, then "}". It returns the index
// after the longest match.
func scanTemplate(s string, start int) (int, bool) {
	limit := min(len(s), start+maxScan)
	reach := make([]bool, limit+1)
	reach[start+2] = true
	best := -1
	objects := map[int][]int{}
	for i := start + 2; i < limit; i++ {
		if !reach[i] {
			continue
		}
		switch c := s[i]; {
		case c == '}':
			if i > start+2 {
				best = i + 1
			}
		case c == '\'' || c == '"':
			for _, e := range stringEnds(s[:limit], i) {
				reach[e] = true
			}
		case c == '{':
			for _, e := range objectEnds(s[:limit], i, objects, 0) {
				reach[e] = true
			}
		case templateChar(c):
			reach[i+1] = true
		}
	}
	return best, best > 0
}

// objectEnds returns every position after the closing brace of an object
// literal opening at s[start] as TEMPLATE reads one: '{', then pairs of a
// name or string literal, ':' and one or more string literals, object
// literals or other characters but braces, quotes, backticks and
// newlines, then '}'. Names cannot be followed by spaces: in a string
// interpolation the lexer does not skip them.
func objectEnds(s string, start int, memo map[int][]int, depth int) []int {
	if ends, ok := memo[start]; ok {
		return ends
	}
	if depth > maxDepth {
		return nil
	}
	memo[start] = nil               // an object cannot contain itself
	pair := make([]bool, len(s)+1)  // where a pair may start, or the object close
	value := make([]bool, len(s)+1) // where a value element may start
	pair[start+1] = true
	var ends []int
	for i := start + 1; i < len(s); i++ {
		if pair[i] {
			switch c := s[i]; {
			case c == '}':
				ends = append(ends, i+1)
			case c == '\'' || c == '"':
				for _, e := range stringEnds(s, i) {
					if e < len(s) && s[e] == ':' {
						value[e+1] = true
					}
				}
			default:
				if n := identLength(s[i:]); n > 0 && i+n < len(s) && s[i+n] == ':' {
					value[i+n+1] = true
				}
			}
		}
		if value[i] {
			// After a value element the pair may go on, end, or a new
			// pair start.
			switch c := s[i]; {
			case c == '\'' || c == '"':
				for _, e := range stringEnds(s, i) {
					value[e], pair[e] = true, true
				}
			case c == '{':
				for _, e := range objectEnds(s, i, memo, depth+1) {
					value[e], pair[e] = true, true
				}
			case templateChar(c):
				value[i+1], pair[i+1] = true, true
			}
		}
	}
	memo[start] = ends
	return ends
}

// parseInterpolation parses the inside of a `...` string: text, \` and \$
// escapes, and ${...} bindings. It yields concat(”, parts...), as the npm
// package does.
func parseInterpolation(body string, depth int) (*expr, error) {
	parts := []*expr{constant("")}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, constant(text.String()))
			text.Reset()
		}
	}
	for i := 0; i < len(body); {
		switch {
		case body[i] == '\\' && i+1 < len(body) && (body[i+1] == '`' || body[i+1] == '$'):
			flush()
			parts = append(parts, constant(body[i+1:i+2]))
			i += 2
		case strings.HasPrefix(body[i:], "${"):
			end, ok := scanTemplate(body, i)
			if !ok {
				text.WriteByte(body[i])
				i++
				continue
			}
			flush()
			e, err := parseExpression(trimBinding(body[i:end]), depth+1)
			if err != nil {
				return nil, err
			}
			parts = append(parts, e)
			i = end
		default:
			text.WriteByte(body[i])
			i++
		}
	}
	flush()
	return call("concat", parts...)
}

// trimBinding turns "${ expression }" into "expression".
func trimBinding(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "$")
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = s[1 : len(s)-1]
	}
	return strings.TrimSpace(s)
}
