package expr

import (
	"fmt"
	"strconv"
	"strings"
)

// parse builds the syntax tree of a CEL expression. It accepts what CEL's
// reference parser accepts with the macros of our environment, except
// message construction (Type{field: value}): expressions know no message
// types. maxNesting bounds nesting as the reference parser's recursion limit
// does, so that the same expressions pass.
//
// The tree follows the reference parser's choices:
//   - a '-' just before an int or double literal is part of it (-1 is the
//     literal -1, at the '-'); pairs of prefix '-' or '!' cancel out;
//   - chains of && and || become balanced trees of binary calls;
//   - a in b is the call @in(a, b);
//   - namespaced calls such as math.greatest(x) or optional.of(x) are
//     member calls on the ident math or optional; arguments of
//     math.greatest and math.least are checked here, as the reference
//     does in its macros;
//   - a name written with a leading dot keeps it (".input", ".f");
//   - calls and macros point at their '(' (has(a.b) too);
//   - a field name in backquotes, a.`content-type`, is the bare name.
func parse(src string, maxNesting int) (root exprNode, err *Error) {
	p := &parser{lex: lexer{src: src}, max: maxNesting}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			root, err = nil, e
		}
	}()
	p.tok = p.lex.next()
	p.ahead = p.lex.next()
	root = p.expr()
	if p.tok.kind != tokEOF {
		p.unexpected()
	}
	if nesting(root) > maxNesting {
		p.tooDeep()
	}
	return root, nil
}

// Rules whose nesting the reference parser counts, each on its own.
const (
	ruleExpr = iota
	ruleRelation
	ruleCalc
)

type parser struct {
	lex        lexer
	tok, ahead token // the current token and the one after it
	max        int
	depth      [3]int // nesting of each rule
}

func (p *parser) advance() token {
	t := p.tok
	p.tok, p.ahead = p.ahead, p.lex.next()
	return t
}

// is reports whether the current token is the punctuation or operator s.
func (p *parser) is(s string) bool { return p.tok.kind == tokPunct && p.tok.text == s }

func (p *parser) accept(s string) bool {
	if p.is(s) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) expect(s string) {
	if !p.is(s) {
		p.fail(p.tok.off, "expected '%s', found %s", s, describe(p.tok))
	}
	p.advance()
}

func (p *parser) fail(off int, format string, args ...any) {
	p.lex.fail(off, format, args...)
}

func (p *parser) unexpected() {
	p.fail(p.tok.off, "unexpected %s", describe(p.tok))
}

func (p *parser) tooDeep() {
	panic(&Error{Line: 1, Column: 1, Message: fmt.Sprintf("expression nests more than %d levels deep", p.max)})
}

func describe(t token) string {
	if t.kind == tokEOF {
		return "end of expression"
	}
	return "'" + t.text + "'"
}

// enter and leave count the nesting of a grammar rule.
func (p *parser) enter(rule int) {
	if p.depth[rule]++; p.depth[rule] > p.max {
		p.tooDeep()
	}
}

func (p *parser) leave(rule int) { p.depth[rule]-- }

// expr is a ternary or what binds tighter.
func (p *parser) expr() exprNode {
	p.enter(ruleExpr)
	defer p.leave(ruleExpr)
	cond := p.logic("||")
	if !p.is("?") {
		return cond
	}
	off := p.advance().off
	yes := p.logic("||")
	p.expect(":")
	return &call{Offset: off, Func: "_?_:_", Args: []exprNode{cond, yes, p.expr()}}
}

// logic parses a chain of || (or of &&) and, as the reference parser does,
// builds a balanced tree of it, which keeps long chains shallow.
func (p *parser) logic(op string) exprNode {
	term := func() exprNode {
		if op == "||" {
			return p.logic("&&")
		}
		return p.relation(false)
	}
	terms := []exprNode{term()}
	var offs []int
	for p.is(op) {
		offs = append(offs, p.advance().off)
		terms = append(terms, term())
	}
	var build func(lo, hi int) exprNode
	build = func(lo, hi int) exprNode {
		mid := (lo + hi + 1) / 2
		left, right := terms[mid], terms[mid+1]
		if mid > lo {
			left = build(lo, mid-1)
		}
		if mid < hi {
			right = build(mid+1, hi)
		}
		return &call{Offset: offs[mid], Func: "_" + op + "_", Args: []exprNode{left, right}}
	}
	if len(offs) == 0 {
		return terms[0]
	}
	return build(0, len(offs)-1)
}

var relations = map[string]string{"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in"}

// relation parses comparisons, which associate to the left; the right
// operand of one is a relation that takes no comparison of its own.
func (p *parser) relation(right bool) exprNode {
	p.enter(ruleRelation)
	defer p.leave(ruleRelation)
	lhs := p.calc(0)
	for !right && p.tok.kind == tokPunct && relations[p.tok.text] != "" {
		op := p.advance()
		lhs = &call{Offset: op.off, Func: relations[op.text], Args: []exprNode{lhs, p.relation(true)}}
	}
	return lhs
}

var precedence = map[string]int{"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}

// calc parses arithmetic by precedence climbing: * / % bind tighter than
// + and -.
func (p *parser) calc(minPrec int) exprNode {
	p.enter(ruleCalc)
	defer p.leave(ruleCalc)
	lhs := p.unary()
	for p.tok.kind == tokPunct {
		prec := precedence[p.tok.text]
		if prec == 0 || prec < minPrec {
			break
		}
		op := p.advance()
		lhs = &call{Offset: op.off, Func: "_" + op.text + "_", Args: []exprNode{lhs, p.calc(prec + 1)}}
	}
	return lhs
}

// unary parses ! and - prefixes; a pair of them cancels out. A '-' just
// before a number is part of the number's literal.
func (p *parser) unary() exprNode {
	for _, op := range []string{"!", "-"} {
		if !p.is(op) || op == "-" && (p.ahead.kind == tokInt || p.ahead.kind == tokFloat) {
			continue
		}
		off, n := p.tok.off, 0
		for p.is(op) {
			p.advance()
			n++
		}
		m := p.member()
		if n%2 == 0 {
			return m
		}
		return &call{Offset: off, Func: op + "_", Args: []exprNode{m}}
	}
	return p.member()
}

// member parses a primary followed by selections, member calls and indexes.
func (p *parser) member() exprNode {
	n := p.primary()
	for {
		switch {
		case p.is("."):
			off := p.advance().off
			opt := p.accept("?")
			quoted := p.tok.kind == tokQuoted
			name := p.name()
			if !opt && !quoted && p.is("(") {
				callOff := p.tok.off
				n = p.callOrMacro(callOff, name, n, p.args())
				continue
			}
			n = &selectExpr{Offset: off, Operand: n, Field: name, Optional: opt}
		case p.is("["):
			off := p.advance().off
			fn := "_[_]"
			if p.accept("?") {
				fn = "_[?_]"
			}
			idx := p.expr()
			p.expect("]")
			n = &call{Offset: off, Func: fn, Args: []exprNode{n, idx}}
		default:
			return n
		}
	}
}

// name reads a field or function name after a '.'.
func (p *parser) name() string {
	switch t := p.advance(); t.kind {
	case tokIdent:
		return t.text
	case tokQuoted:
		return t.val.(string)
	default:
		p.fail(t.off, "expected a name, found %s", describe(t))
		return ""
	}
}

// args parses a parenthesized argument list.
func (p *parser) args() []exprNode {
	p.expect("(")
	var args []exprNode
	if p.accept(")") {
		return args
	}
	for {
		args = append(args, p.expr())
		if p.accept(")") {
			return args
		}
		p.expect(",")
	}
}

// reserved names may not name variables or functions.
var reserved = " as break const continue else for function if import let loop package namespace return var void while "

func (p *parser) primary() exprNode {
	t := p.tok
	switch {
	case t.kind == tokIdent || p.is(".") && p.ahead.kind == tokIdent:
		name := ""
		if p.accept(".") {
			name = "."
		}
		id := p.advance()
		if p.is("(") {
			p.noReserved(id)
			off := p.tok.off
			return p.callOrMacro(off, name+id.text, nil, p.args())
		}
		p.noMessage(id)
		p.noReserved(id)
		return &ident{Offset: id.off, Name: name + id.text}
	case p.accept("("):
		e := p.expr()
		p.expect(")")
		return e
	case p.accept("["):
		l := &listExpr{Offset: t.off}
		for first := true; !p.is("]") && !(first && p.accept(",")); first = false { // [,] is empty too
			l.Optional = append(l.Optional, p.accept("?"))
			l.Elems = append(l.Elems, p.expr())
			if !p.accept(",") {
				break
			}
		}
		p.expect("]")
		return l
	case p.accept("{"):
		m := &mapExpr{Offset: t.off}
		for first := true; !p.is("}") && !(first && p.accept(",")); first = false { // {,} is empty too
			opt := p.accept("?")
			k := p.expr()
			p.expect(":")
			m.Entries = append(m.Entries, mapEntry{Key: k, Value: p.expr(), Optional: opt})
			if !p.accept(",") {
				break
			}
		}
		p.expect("}")
		return m
	case t.kind == tokLiteral:
		p.advance()
		return &literal{Offset: t.off, Value: t.val}
	case t.kind == tokInt || t.kind == tokFloat || p.is("-") && (p.ahead.kind == tokInt || p.ahead.kind == tokFloat):
		sign := ""
		if p.accept("-") {
			sign = "-"
		}
		num := p.advance()
		if v := numberValue(sign, num); v != nil {
			return &literal{Offset: t.off, Value: v}
		}
		kind := "int"
		if num.kind == tokFloat {
			kind = "double"
		}
		p.fail(t.off, "invalid %s literal %s%s", kind, sign, num.text)
	}
	p.unexpected()
	return nil
}

func (p *parser) noReserved(id token) {
	if strings.Contains(reserved, " "+id.text+" ") {
		p.fail(id.off, "%s is a reserved word", id.text)
	}
}

// noMessage refuses message construction, a.b.C{...}, which the reference
// grammar allows for protocol buffer types; expressions here have none.
func (p *parser) noMessage(id token) {
	l := p.lex // a copy: look ahead without consuming
	pending := []token{p.tok, p.ahead}
	next := func() token {
		if len(pending) == 0 {
			return l.next()
		}
		t := pending[0]
		pending = pending[1:]
		return t
	}
	for {
		switch t := next(); {
		case t.kind == tokPunct && t.text == "{":
			p.fail(id.off, "message construction is not supported")
		case t.kind != tokPunct || t.text != ".":
			return
		}
		if next().kind != tokIdent {
			return
		}
	}
}

// numberValue returns the value of an int or double literal, or nil if it
// is out of range.
func numberValue(sign string, t token) any {
	if t.kind == tokFloat {
		f, err := strconv.ParseFloat(sign+t.text, 64)
		if err != nil {
			return nil
		}
		return f
	}
	digits, base := t.text, 10
	if strings.HasPrefix(digits, "0x") {
		digits, base = digits[2:], 16
	}
	i, err := strconv.ParseInt(sign+digits, base, 64)
	if err != nil {
		return nil
	}
	return i
}

// parseUint returns the uint64 value of digits, or nil if they are out of
// range.
func parseUint(digits string) any {
	base := 10
	if strings.HasPrefix(digits, "0x") {
		digits, base = digits[2:], 16
	}
	u, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return nil
	}
	return u
}

var macroKinds = map[string]macroKind{"all": macroAll, "exists": macroExists, "exists_one": macroExistsOne,
	"map": macroMap, "filter": macroFilter, "bind": macroBind, "optMap": macroOptMap,
	"optFlatMap": macroOptFlatMap, "sortBy": macroSortBy}

// callOrMacro builds a call of fn, or the macro it spells. off is where its
// '(' stands.
func (p *parser) callOrMacro(off int, fn string, target exprNode, args []exprNode) exprNode {
	if target == nil {
		if fn != "has" || len(args) != 1 {
			return &call{Offset: off, Func: fn, Args: args}
		}
		s, ok := args[0].(*selectExpr)
		if !ok || s.Optional {
			p.fail(args[0].Pos(), "has() takes a field selection, such as has(input.field)")
		}
		return &selectExpr{Offset: off, Operand: s.Operand, Field: s.Field, Test: true}
	}
	if id, ok := target.(*ident); ok && id.Name == "math" && (fn == "greatest" || fn == "least") {
		p.mathArgs(id, fn, args)
	}
	kind, ok := macroKinds[fn]
	want := 2
	switch kind {
	case macroMap:
		want = max(2, len(args))
	case macroBind:
		want = 3
		if id, isIdent := target.(*ident); !isIdent || id.Name != "cel" {
			ok = false
		}
	}
	if !ok || len(args) != want || want > 3 {
		return &call{Offset: off, Func: fn, Args: args, Target: target}
	}
	m := &macro{Offset: off, Kind: kind, Range: target, Body: args[len(args)-1]}
	if kind == macroBind {
		m.Range = args[1]
	}
	if want == 3 && kind == macroMap {
		m.Filter = args[1]
	}
	switch target.(type) {
	case *literal, *mapExpr:
		if kind == macroSortBy {
			p.fail(target.Pos(), "sortBy() applies to a list, not a literal")
		}
	}
	v, ok := args[0].(*ident)
	if !ok {
		p.fail(args[0].Pos(), "the first argument of %s() must be a variable name", fn)
	}
	if v.Name == "__result__" && (kind < macroBind || kind == macroSortBy) {
		p.fail(v.Offset, "%s() may not use the variable name __result__", fn)
	}
	m.Var = v.Name
	return m
}

// nesting returns how deeply the reference parser counts a tree to nest:
// each comparison, arithmetic operator, ternary, selection, index and member
// call one level.
func nesting(n exprNode) int {
	var kids []exprNode
	self := 0
	switch n := n.(type) {
	case *selectExpr:
		self, kids = 1, []exprNode{n.Operand}
	case *call:
		kids = n.Args
		if n.Target != nil {
			self, kids = 1, append([]exprNode{n.Target}, n.Args...)
		} else if strings.Contains(" _?_:_ _<_ _<=_ _>_ _>=_ _==_ _!=_ @in _+_ _-_ _*_ _/_ _%_ _[_] _[?_] ", " "+n.Func+" ") {
			self = 1
		}
	case *listExpr:
		kids = n.Elems
	case *mapExpr:
		for _, e := range n.Entries {
			kids = append(kids, e.Key, e.Value)
		}
	case *macro:
		self, kids = 1, []exprNode{n.Range, n.Body}
		if n.Filter != nil {
			kids = append(kids, n.Filter)
		}
	}
	d := 0
	for _, k := range kids {
		d = max(d, nesting(k))
	}
	return self + d
}

// mathArgs refuses the arguments of math.greatest and math.least that the
// reference implementation refuses while parsing: none, a literal that is
// not a number, or a single list that is not a list of numbers.
func (p *parser) mathArgs(math *ident, fn string, args []exprNode) {
	numeric := func(n exprNode) bool {
		switch n := n.(type) {
		case *literal:
			switch n.Value.(type) {
			case int64, uint64, float64:
				return true
			}
			return false
		case *listExpr, *mapExpr:
			return false
		}
		return true
	}
	switch {
	case len(args) == 0:
		p.fail(math.Offset, "math.%s() needs at least one argument", fn)
	case len(args) == 1:
		if l, ok := args[0].(*listExpr); ok && len(l.Elems) > 0 {
			args = l.Elems
		} else if !numeric(args[0]) {
			p.fail(args[0].Pos(), "math.%s() takes numbers or a list of numbers", fn)
		}
	}
	for _, a := range args {
		if !numeric(a) {
			p.fail(a.Pos(), "math.%s() takes numbers or a list of numbers", fn)
		}
	}
}
