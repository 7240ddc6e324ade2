package expr

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// globals are the names an expression sees outside any macro: the three
// variables and the type names, each with its type.
var globals = func() map[string]celType {
	m := map[string]celType{}
	for _, f := range strings.Fields(`input:dyn steps:map(string,dyn) execution:map(string,dyn)
		bool:type(bool) bytes:type(bytes) double:type(double) int:type(int) uint:type(uint)
		string:type(string) null_type:type(null_type) type:type(type) list:type(list(dyn))
		map:type(map(dyn,dyn)) optional_type:type(optional(dyn))
		google.protobuf.Duration:type(duration) google.protobuf.Timestamp:type(timestamp)`) {
		name, t, _ := strings.Cut(f, ":")
		m[name] = parseType(t)
	}
	return m
}()

// suggestible are the names CEL's reference checker suggests for a
// misspelt one besides globals and functions: the macros' function names,
// and the names of functions it declares for internal use or as aliases.
var suggestible = []string{"has", "all", "exists", "exists_one", "map", "filter", "optMap", "optFlatMap", "least", "greatest", "sortBy", "bind",
	"in", "_in_", "__not_strictly_false__", "@not_strictly_false", "_?._", "cel.@block", "math.@max", "math.@min", "@sortByAssociatedKeys"}

// checker infers the types of one expression's nodes.
type checker struct {
	src   string
	subst substitution
	fresh int
	scope []local
	err   *Error
	off   int // offset of err
	// The calls of format on a literal string with a literal list are
	// validated once all types are known; types holds the types of their
	// arguments, recorded while recording > 0.
	formats   []*call
	types     map[exprNode]celType
	recording int
}

// local is a macro's variable.
type local struct {
	name string
	t    celType
}

// check infers the type of the expression root and reports the first (in
// source order) of its type errors. It rewrites a receiver-style call on a
// namespace, such as math.greatest(a, b), into a global call.
func check(root exprNode, src string) (celType, *Error) {
	c := &checker{src: src, subst: substitution{}}
	t := c.check(root)
	if c.err == nil {
		for _, f := range c.formats {
			c.checkFormat(f)
		}
	}
	if c.err != nil {
		return errorType, c.err
	}
	return c.subst.apply(t, true), nil
}

func (c *checker) errorf(off int, format string, args ...any) celType {
	if c.err == nil || off < c.off {
		line, col := position(c.src, off)
		c.err, c.off = &Error{Line: line, Column: col, Message: fmt.Sprintf(format, args...)}, off
	}
	return errorType
}

// name spells a type in an error message, unbound type parameters as dyn.
func (c *checker) name(t celType) string { return c.subst.apply(t, true).format(true) }

func (c *checker) check(e exprNode) celType {
	t := c.infer(e)
	if c.recording > 0 {
		c.types[e] = t
	}
	return t
}

func (c *checker) infer(e exprNode) celType {
	switch n := e.(type) {
	case *literal:
		switch n.Value.(type) {
		case nil:
			return nullType
		case bool:
			return boolType
		case int64:
			return intType
		case uint64:
			return uintType
		case float64:
			return doubleType
		case string:
			return stringType
		case []byte:
			return bytesType
		}
	case *ident:
		if t, ok := c.lookup(n.Name); ok {
			return t
		}
		return c.undeclared(n.Offset, n.Name)
	case *selectExpr:
		return c.checkSelect(n)
	case *call:
		return c.checkCall(n)
	case *listExpr:
		var elem *celType
		for i, el := range n.Elems {
			t := c.check(el)
			if i < len(n.Optional) && n.Optional[i] {
				t = c.unwrapOptional(el, t)
			}
			elem = c.join(elem, t)
		}
		if elem == nil {
			return listOf(c.freshParam())
		}
		return listOf(*elem)
	case *mapExpr:
		var key, val *celType
		for _, en := range n.Entries {
			key = c.join(key, c.check(en.Key))
			t := c.check(en.Value)
			if en.Optional {
				t = c.unwrapOptional(en.Value, t)
			}
			val = c.join(val, t)
		}
		if key == nil {
			return mapOf(c.freshParam(), c.freshParam())
		}
		return mapOf(*key, *val)
	case *macro:
		return c.checkMacro(n)
	}
	panic(fmt.Sprintf("expr: cannot check %T", e))
}

// lookup finds the type of a name: a macro's variable, else a global. A
// leading dot, as in .input, skips the macros' variables.
func (c *checker) lookup(name string) (celType, bool) {
	if name != "" && name[0] == '.' {
		t, ok := globals[name[1:]]
		return t, ok
	}
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.scope[i].name == name {
			return c.scope[i].t, true
		}
	}
	t, ok := globals[name]
	return t, ok
}

func (c *checker) freshParam() celType {
	c.fresh++
	return paramType(fmt.Sprintf("_var%d", c.fresh-1))
}

// join is the element type of a list or map literal: the most general of
// the elements' types, or dyn when they disagree.
func (c *checker) join(prev *celType, t celType) *celType {
	if prev == nil {
		return &t
	}
	if c.subst.assignable(*prev, t) {
		g := mostGeneral(*prev, t)
		return &g
	}
	return &dynType
}

// unwrapOptional is the type of an optional element ?e of a literal.
func (c *checker) unwrapOptional(e exprNode, t celType) celType {
	if t.Kind == kindOptional {
		return t.Args[0]
	}
	if t.Kind != kindDyn {
		c.errorf(e.Pos(), "expected type '%s' but found '%s'", c.name(optionalOf(t)), c.name(t))
	}
	return t
}

// qualifiedName spells a chain of plain selects ending in an identifier,
// such as google.protobuf.Timestamp, or returns "".
func qualifiedName(e exprNode) string {
	switch n := e.(type) {
	case *ident:
		return n.Name
	case *selectExpr:
		if !n.Test && !n.Optional {
			if q := qualifiedName(n.Operand); q != "" {
				return q + "." + n.Field
			}
		}
	}
	return ""
}

// declaredPrefix reports whether a proper prefix of the dotted name is a
// variable or type name.
func (c *checker) declaredPrefix(name string) bool {
	for i := range len(name) {
		if name[i] == '.' {
			if _, ok := c.lookup(name[:i]); ok {
				return true
			}
		}
	}
	return false
}

func (c *checker) checkSelect(n *selectExpr) celType {
	if q := qualifiedName(n); q != "" {
		first, _, _ := strings.Cut(q, ".")
		if t, ok := c.lookup(q); ok && !slices.ContainsFunc(c.scope, func(l local) bool { return l.name == first }) {
			return t
		}
		if !c.declaredPrefix(q) && len(suggest(q)) > 0 {
			return c.undeclared(n.Offset, q)
		}
	}
	t := c.subst.apply(c.check(n.Operand), false)
	opt := n.Optional
	if t.Kind == kindOptional {
		t, opt = t.Args[0], true
	}
	var field celType
	switch t.Kind {
	case kindMap:
		field = t.Args[1]
	case kindParam:
		c.subst.assignable(dynType, t)
		field = dynType
	default:
		if !t.isDynOrError() {
			c.errorf(n.Offset, "type '%s' does not support field selection", c.name(t))
		}
		field = dynType
	}
	if n.Test {
		return boolType
	}
	if opt {
		field = optionalOf(field)
	}
	return c.subst.apply(field, false)
}

// undeclared reports a name that is not declared, suggesting declared
// names close to it.
func (c *checker) undeclared(off int, name string) celType {
	s := suggest(name)
	switch {
	case len(s) == 0 || len(s) == 1 && s[0] == name:
		return c.errorf(off, "undeclared reference to '%s'", name)
	case len(s) == 1:
		return c.errorf(off, "undeclared reference to '%s' (did you mean '%s'?)", name, s[0])
	}
	return c.errorf(off, "undeclared reference to '%s' (did you mean '%s' or '%s'?)", name, s[0], s[1])
}

// suggest returns the declared names a misspelt name may have meant: the
// name itself if declared, else up to two closest by edit distance, else up
// to two the name begins. Dotted names only match dotted names.
func suggest(name string) []string {
	names := append([]string(nil), suggestible...)
	for n := range globals {
		names = append(names, n)
	}
	for _, o := range overloads {
		if o.Name != "math.greatest" && o.Name != "math.least" && o.Name != "sortBy" {
			names = append(names, o.Name)
		}
	}
	maxDist := 2
	if len(name) <= 3 {
		maxDist = 1
	} else if len(name) > 8 {
		maxDist = len(name) / 3
	}
	dotted := strings.Contains(name, ".")
	var near, prefixed []string
	nearDist := maxDist + 1
	for _, n := range names {
		if n == name {
			return []string{name}
		}
		if strings.Contains(n, ".") != dotted {
			continue
		}
		if d := editDistance(name, n); d < nearDist {
			near, nearDist = []string{n}, d
		} else if d == nearDist && d <= maxDist {
			near = keepTwo(near, n)
		}
		if len(name) >= 2 && strings.HasPrefix(n, name) {
			prefixed = keepTwo(prefixed, n)
		}
	}
	if near == nil {
		return prefixed
	}
	return near
}

// keepTwo adds n to top, the up to two shortest names, alphabetically
// first among equally long ones.
func keepTwo(top []string, n string) []string {
	if slices.Contains(top, n) {
		return top
	}
	top = append(top, n)
	for i := len(top) - 1; i > 0 && (len(top[i]) < len(top[i-1]) || len(top[i]) == len(top[i-1]) && top[i] < top[i-1]); i-- {
		top[i], top[i-1] = top[i-1], top[i]
	}
	return top[:min(len(top), 2)]
}

// editDistance is the Damerau-Levenshtein distance between two names in
// characters; very unequal or long names count as far apart.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	la, lb := len(ra), len(rb)
	switch {
	case la == 0 || lb == 0:
		return la + lb
	case la >= 16 && 2*la >= 3*lb:
		return la - lb
	case lb >= 16 && 2*lb >= 3*la:
		return lb - la
	case la*lb > 64*64:
		return 1 << 30
	}
	d := make([][]int, la+1)
	for i := range d {
		d[i] = make([]int, lb+1)
		d[i][0] = i
	}
	for j := range lb + 1 {
		d[0][j] = j
	}
	for i := 1; i <= la; i++ {
		rowMin := d[i][0]
		for j := 1; j <= lb; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
			rowMin = min(rowMin, d[i][j])
		}
		if rowMin > max(la, lb)/3 {
			return 1 << 30
		}
	}
	return d[la][lb]
}

func declared(name string) bool {
	return slices.ContainsFunc(overloads, func(o overload) bool { return o.Name == name })
}

func (c *checker) checkCall(n *call) celType {
	// A leading dot names the root scope, where every function is.
	if n.Target == nil {
		n.Func = strings.TrimPrefix(n.Func, ".")
	}
	if q := qualifiedName(n.Target); q != "" {
		name := strings.TrimPrefix(q, ".") + "." + n.Func
		if declared(name) {
			n.Func, n.Target = name, nil
		} else if !c.declaredPrefix(name) && len(suggest(name)) > 0 {
			for _, a := range n.Args {
				c.check(a)
			}
			return c.undeclared(n.Offset, name)
		}
	}
	if n.Target == nil && (n.Func == "math.greatest" || n.Func == "math.least") {
		return c.checkGreatest(n)
	}
	format := isFormat(n)
	if format {
		if c.types == nil {
			c.types = map[exprNode]celType{}
		}
		c.formats = append(c.formats, n)
		c.recording++
	}
	var args []celType
	if n.Target != nil {
		args = append(args, c.check(n.Target))
	}
	for _, a := range n.Args {
		args = append(args, c.check(a))
	}
	if format {
		c.recording--
	}
	// Outside its macro, sortBy is no function.
	if !declared(n.Func) || n.Func == "sortBy" {
		return c.undeclared(n.Offset, n.Func)
	}
	if n.Func == "_&&_" || n.Func == "_||_" {
		for i, t := range args {
			if !c.subst.assignable(t, boolType) {
				c.errorf(n.Args[i].Pos(), "expected type 'bool' but found '%s'", c.name(t))
			}
		}
		return boolType
	}
	return c.resolve(n.Offset, n.Func, n.Target != nil, args)
}

// isFormat reports whether n calls format on a literal string with a
// literal list.
func isFormat(n *call) bool {
	lit, ok := n.Target.(*literal)
	if !ok || n.Func != "format" || len(n.Args) != 1 {
		return false
	}
	_, isString := lit.Value.(string)
	_, isList := n.Args[0].(*listExpr)
	return isString && isList
}

// resolve finds the overloads of fn that accept arguments of the given
// types (the receiver's first if member) and returns their result type:
// the one result they agree on, or dyn.
func (c *checker) resolve(off int, fn string, member bool, args []celType) celType {
	var result *celType
	for _, o := range overloads {
		if o.Name != fn || o.Member != member || len(o.Params) != len(args) {
			continue
		}
		// An overload with type parameters gets fresh ones at each call.
		params, res := o.Params, o.Result
		if slices.ContainsFunc(params, celType.hasParam) || res.hasParam() {
			fresh := substitution{}
			params = make([]celType, len(o.Params))
			for i, p := range o.Params {
				params[i] = c.instantiate(fresh, p)
			}
			res = c.instantiate(fresh, res)
		}
		if !c.subst.assignableAll(args, params) {
			continue
		}
		t := c.subst.apply(res, false)
		switch {
		case result == nil:
			result = &t
		case result.Kind != kindDyn && !t.equal(*result):
			result = &dynType
		}
	}
	if result != nil {
		return *result
	}
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = c.name(a)
	}
	sig := "(" + strings.Join(names, ", ") + ")"
	if member {
		sig = names[0] + ".(" + strings.Join(names[1:], ", ") + ")"
	}
	return c.errorf(off, "found no matching overload for '%s' applied to '%s'", fn, sig)
}

// instantiate renames an overload's type parameters to fresh ones, the same
// within one overload.
func (c *checker) instantiate(fresh substitution, t celType) celType {
	if t.Kind == kindParam {
		if _, ok := fresh[t.Name]; !ok {
			fresh[t.Name] = c.freshParam()
		}
		return fresh[t.Name]
	}
	if len(t.Args) == 0 {
		return t
	}
	args := make([]celType, len(t.Args))
	for i, a := range t.Args {
		args[i] = c.instantiate(fresh, a)
	}
	return celType{Kind: t.Kind, Args: args}
}

// checkGreatest checks math.greatest and math.least, which take one number
// or list of numbers, or two numbers, or more numbers as if a list. The
// parser has refused other arguments.
func (c *checker) checkGreatest(n *call) celType {
	var args []celType
	for _, a := range n.Args {
		args = append(args, c.check(a))
	}
	if len(args) > 2 {
		var elem *celType
		for _, t := range args {
			elem = c.join(elem, t)
		}
		args = []celType{listOf(*elem)}
	}
	return c.resolve(n.Offset, n.Func, false, args)
}

// rangeVar is the type of the variable of a macro iterating over a value
// of type t, which is at off.
func (c *checker) rangeVar(off int, t celType) celType {
	t = c.subst.apply(t, false)
	switch t.Kind {
	case kindList, kindMap:
		return t.Args[0]
	case kindDyn, kindError, kindParam:
		c.subst.assignable(dynType, t)
		return dynType
	}
	c.errorf(off, "expression of type '%s' cannot be range of a comprehension (must be list, map, or dynamic)", c.name(t))
	return errorType
}

// inScope checks body with the variable name of type t in scope.
func (c *checker) inScope(name string, t celType, body exprNode) celType {
	c.scope = append(c.scope, local{name, t})
	defer func() { c.scope = c.scope[:len(c.scope)-1] }()
	return c.check(body)
}

func (c *checker) checkMacro(n *macro) celType {
	rt := c.check(n.Range)
	switch n.Kind {
	case macroBind:
		return c.inScope(n.Var, rt, n.Body)
	case macroOptMap, macroOptFlatMap:
		c.resolve(n.Offset, "hasValue", true, []celType{rt})
		vt := c.resolve(n.Offset, "value", true, []celType{rt})
		bt := c.inScope(n.Var, vt, n.Body)
		if n.Kind == macroOptMap {
			bt = optionalOf(bt)
		}
		return c.resolve(n.Offset, "_?_:_", false, []celType{boolType, bt, optionalOf(c.freshParam())})
	case macroSortBy:
		// The reference checker reports sortBy's errors at its '('.
		key := c.inScope(n.Var, c.rangeVar(n.Offset, rt), n.Body)
		return c.resolve(n.Offset, "sortBy", true, []celType{rt, listOf(c.subst.apply(key, false))})
	}
	vt := c.rangeVar(n.Range.Pos(), rt)
	var ft celType
	if n.Filter != nil {
		ft = c.inScope(n.Var, vt, n.Filter)
	}
	bt := c.inScope(n.Var, vt, n.Body)
	// The reference checker expands the macros into loops of ternaries,
	// and reports a predicate that cannot be bool as such a ternary's.
	switch n.Kind {
	case macroMap:
		bt = c.subst.apply(bt, false)
		if n.Filter != nil {
			c.resolve(n.Offset, "_?_:_", false, []celType{ft, listOf(bt), listOf(bt)})
		}
		return listOf(bt)
	case macroFilter:
		c.resolve(n.Offset, "_?_:_", false, []celType{bt, listOf(vt), listOf(vt)})
		return listOf(vt)
	case macroExistsOne:
		c.resolve(n.Offset, "_?_:_", false, []celType{bt, intType, intType})
		return boolType
	}
	if !c.subst.assignable(bt, boolType) {
		c.errorf(n.Body.Pos(), "expected type 'bool' but found '%s'", c.name(bt))
	}
	return boolType
}

// checkFormat checks that a literal format string has a clause for every
// element of the literal list of arguments, and that each clause may
// format its argument.
func (c *checker) checkFormat(n *call) {
	s := n.Target.(*literal).Value.(string)
	args := n.Args[0].(*listExpr).Elems
	used := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			i++
			continue
		}
		used++
		if i+1 >= len(s) {
			c.errorf(n.Offset, "unexpected end of string")
			return
		}
		if used > len(args) {
			c.errorf(n.Offset, "index %d out of range", used-1)
			return
		}
		j := i + 1
		if s[j] == '.' {
			start := j + 1
			for j = start; j < len(s) && '0' <= s[j] && s[j] <= '9'; j++ {
			}
			const bad = "could not parse formatting clause: error while parsing precision: "
			p, err := strconv.Atoi(s[start:min(j, len(s))])
			switch {
			case j >= len(s):
				c.errorf(n.Offset, bad+"could not find end of precision specifier")
				return
			case err != nil:
				c.errorf(n.Offset, bad+"error while converting precision to integer: %v", err)
				return
			case p > 100:
				c.errorf(n.Offset, bad+"precision %d exceeds maximum allowed precision 100", p)
				return
			}
		}
		i = j
		arg := args[used-1]
		t := c.subst.apply(c.types[arg], true)
		var kinds []typeKind
		var what string
		switch s[j] {
		case 's':
			if bad := c.unprintable(arg); bad != nil {
				c.errorf(bad.Pos(), "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given %s",
					kindNames[c.subst.apply(c.types[bad], true).Kind])
				return
			}
			continue
		case 'd', 'f', 'e':
			kinds = []typeKind{kindInt, kindUint, kindDouble}
			what = [...]string{"decimal", "fixed-point", "scientific"}[strings.IndexByte("dfe", s[j])] + " clause can only be used on ints, uints, and doubles"
		case 'b':
			kinds, what = []typeKind{kindBool, kindInt, kindUint}, "only ints, uints, and bools can be formatted as binary"
		case 'x', 'X':
			kinds, what = []typeKind{kindInt, kindUint, kindString, kindBytes}, "only ints, uints, bytes, and strings can be formatted as hex"
		case 'o':
			kinds, what = []typeKind{kindInt, kindUint}, "octal clause can only be used on ints and uints"
		default:
			c.errorf(n.Offset, "could not parse formatting clause: unrecognized formatting clause \"%c\"", rune(s[j]))
			return
		}
		if t.Kind != kindDyn && !slices.Contains(kinds, t.Kind) {
			c.errorf(arg.Pos(), "error during formatting: %s, was given %s", what, kindNames[t.Kind])
			return
		}
	}
	if len(args) > used {
		c.errorf(n.Offset, "too many arguments supplied to string.format (expected %d, got %d)", used, len(args))
	}
}

// unprintable returns the part of e that %s cannot format: e itself, or an
// element of a list or map literal; nil if none.
func (c *checker) unprintable(e exprNode) exprNode {
	switch c.subst.apply(c.types[e], true).Kind {
	case kindOptional, kindError:
		return e
	}
	var parts []exprNode
	switch n := e.(type) {
	case *listExpr:
		parts = n.Elems
	case *mapExpr:
		for _, en := range n.Entries {
			parts = append(parts, en.Key, en.Value)
		}
	}
	for _, p := range parts {
		if bad := c.unprintable(p); bad != nil {
			return bad
		}
	}
	return nil
}
