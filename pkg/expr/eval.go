package expr

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// evaluator runs one checked syntax tree over the variables of one Eval
// call, spending from the call's budget.
type evaluator struct {
	ctx   context.Context
	act   *activation
	b     *budget
	check uint64 // the budget use at which the context is next checked
}

// scope binds the variables of macros and cel.bind. A cel.bind variable is
// lazy: its expression is evaluated, once, where the body first reads it,
// as cel-go does, so an unused binding neither costs nor fails.
type scope struct {
	name string
	val  any
	up   *scope
	lazy exprNode // the expression still to evaluate, in the scope up
}

// stop ends an evaluation at once: the cost limit or the context.
type stop struct{ err error }

// run evaluates root. An error value that reaches the top becomes the
// error; so do the cost limit and the context.
func (e *evaluator) run(root exprNode) (val any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(stop)
			if !ok {
				panic(r)
			}
			val, err = nil, s.err
		}
	}()
	e.check = e.b.used
	val = e.eval(root, nil)
	if ev, ok := val.(*evalError); ok {
		return nil, ev
	}
	return val, nil
}

// spend counts n units of cost, and checks the context every 100 units.
func (e *evaluator) spend(n uint64) {
	if n > e.b.limit-min(e.b.used, e.b.limit) {
		e.b.used = e.b.limit
		panic(stop{fmt.Errorf("%w of %d", ErrCostLimit, e.b.limit)})
	}
	e.b.used += n
	if e.b.used >= e.check {
		e.check = e.b.used + 100
		if err := e.ctx.Err(); err != nil {
			panic(stop{err})
		}
	}
}

func (e *evaluator) eval(n exprNode, s *scope) any {
	e.spend(1)
	switch n := n.(type) {
	case *literal:
		return n.Value
	case *ident:
		return e.resolve(n.Name, s)
	case *selectExpr:
		return e.selectField(n, s)
	case *call:
		return e.call(n, s)
	case *listExpr:
		out := make([]any, 0, len(n.Elems))
		for i, el := range n.Elems {
			v := e.eval(el, s)
			if isError(v) {
				return v
			}
			if n.Optional[i] {
				o, ok := v.(optional)
				if !ok {
					return errorf("cannot initialize optional list element from non-optional value %v", v)
				}
				if !o.has {
					continue
				}
				v = o.v
			}
			out = append(out, v)
		}
		return out
	case *mapExpr:
		m := &mapValue{}
		for _, en := range n.Entries {
			k := e.eval(en.Key, s)
			if isError(k) {
				return k
			}
			v := e.eval(en.Value, s)
			if isError(v) {
				return v
			}
			if en.Optional {
				o, ok := v.(optional)
				if !ok {
					return errorf("cannot initialize optional entry '%v' from non-optional value %v", k, v)
				}
				if !o.has {
					continue
				}
				v = o.v
			}
			if i := slices.IndexFunc(m.keys, func(key any) bool { return equal(key, k) }); i >= 0 {
				m.vals[i] = v // the last of repeated keys wins, as in cel-go
				continue
			}
			m.keys = append(m.keys, k)
			m.vals = append(m.vals, v)
		}
		return m
	case *macro:
		return e.macro(n, s)
	}
	return errorf("unknown expression %T", n)
}

func isError(v any) bool {
	_, ok := v.(*evalError)
	return ok
}

// typeNames are the type names an expression may use as values.
var typeNames = []typeValue{"int", "uint", "double", "bool", "string", "bytes", "list", "map",
	"null_type", "type", "google.protobuf.Timestamp", "google.protobuf.Duration", "optional_type"}

func (e *evaluator) resolve(name string, s *scope) any {
	if strings.HasPrefix(name, ".") {
		// A leading dot names a variable or type, never a macro's variable.
		name, s = name[1:], nil
	}
	for ; s != nil; s = s.up {
		if s.name == name {
			if s.lazy != nil {
				s.val, s.lazy = e.eval(s.lazy, s.up), nil
			}
			return s.val
		}
	}
	if v, ok := e.act.ResolveName(name); ok {
		return norm(v)
	}
	for _, t := range typeNames {
		if string(t) == name {
			return t
		}
	}
	return errorf("undeclared reference to '%s'", name)
}

func (e *evaluator) selectField(n *selectExpr, s *scope) any {
	v := e.eval(n.Operand, s)
	if isError(v) {
		return v
	}
	if n.Test {
		if o, ok := v.(optional); ok {
			if !o.has {
				return false
			}
			v = o.v
		}
		switch v.(type) {
		case []any:
			return index(v, n.Field, false)
		case map[string]any, *mapValue:
			_, ok := mapGet(v, n.Field)
			return ok
		}
		return false
	}
	return index(v, n.Field, n.Optional)
}

// index is v[k]; opt makes it v[?k], which yields an optional.
func index(v, k any, opt bool) any {
	switch k.(type) {
	case string, int64, uint64, bool, float64:
	default:
		return errorf("invalid qualifier type: %s", goTypeName(k))
	}
	switch c := v.(type) {
	case optional:
		if !c.has {
			return c
		}
		return index(c.v, k, true)
	case []any:
		i, ok := listIndex(k)
		if _, isDouble := k.(float64); !ok && isDouble {
			return errorf("unsupported index value %v in list", k)
		} else if !ok {
			return errorf("unsupported index type '%s' in list", valueType(k))
		}
		if i < 0 || i >= int64(len(c)) {
			if opt {
				return optional{}
			}
			return errorf("index out of bounds: %v", k)
		}
		return wrapOpt(norm(c[i]), opt)
	case map[string]any, *mapValue:
		val, ok := mapGet(c, k)
		if !ok {
			if opt {
				return optional{}
			}
			return errorf("no such key: %v", k)
		}
		return wrapOpt(val, opt)
	}
	if opt {
		return optional{}
	}
	return errorf("no such key: %v", k)
}

func wrapOpt(v any, opt bool) any {
	if opt {
		return optional{v, true}
	}
	return v
}

// listIndex reads a list index: an int, a uint or a double without a
// fraction.
func listIndex(k any) (int64, bool) {
	switch k := k.(type) {
	case int64:
		return k, true
	case uint64:
		if k > math.MaxInt64 {
			return -1, true
		}
		return int64(k), true
	case float64:
		if i := int64(k); float64(i) == k {
			return i, true
		}
	}
	return 0, false
}

func (e *evaluator) call(n *call, s *scope) any {
	switch n.Func {
	case "_&&_", "_||_":
		return e.logic(n.Func == "_||_", n.Args[0], n.Args[1], s)
	case "_?_:_":
		c := e.eval(n.Args[0], s)
		b, ok := c.(bool)
		switch {
		case isError(c):
			return c
		case !ok:
			return errNoOverload
		case b:
			return e.eval(n.Args[1], s)
		}
		return e.eval(n.Args[2], s)
	case "or", "orValue":
		// The alternative is evaluated only when needed, as in cel-go.
		if n.Target != nil && len(n.Args) == 1 {
			v := e.eval(n.Target, s)
			o, ok := v.(optional)
			switch {
			case isError(v):
				return v
			case !ok:
				return errNoOverload
			case o.has && n.Func == "or":
				return o
			case o.has:
				return o.v
			}
			return e.eval(n.Args[0], s)
		}
	case "@in":
		// cel-go folds x in [] to false without evaluating x.
		if l, ok := n.Args[1].(*listExpr); ok && len(l.Elems) == 0 {
			return false
		}
	}
	args := make([]any, 0, len(n.Args)+1)
	if n.Target != nil {
		args = append(args, e.eval(n.Target, s))
	}
	for _, a := range n.Args {
		args = append(args, e.eval(a, s))
	}
	for _, a := range args {
		if isError(a) {
			return a
		}
	}
	f := functions[n.Func]
	if f == nil {
		return errorf("no such overload: %s", n.Func)
	}
	v := f(e, args)
	if v == errNoOverload {
		return noOverload(n.Func, args)
	}
	return v
}

// operandTraits lists, for the operators and functions that cel-go dispatches on
// a trait of their first operand, the types that have it.
var operandTraits = map[string]string{
	"_+_": "int uint double string bytes list google.protobuf.Timestamp google.protobuf.Duration",
	"_-_": "int uint double google.protobuf.Timestamp google.protobuf.Duration",
	"_*_": "int uint double", "_/_": "int uint double", "_%_": "int uint", "-_": "int double",
	"_<_":  "int uint double string bytes bool google.protobuf.Timestamp google.protobuf.Duration",
	"size": "string bytes list map", "matches": "string",
}

// single lists the standard functions of one overload, which cel-go calls
// without looking at the argument types.
var single = []string{"contains", "endsWith", "startsWith"}

var receivers = []string{"string", "google.protobuf.Timestamp", "google.protobuf.Duration"}

// noOverload words "no such overload" as cel-go does for the function.
func noOverload(name string, args []any) *evalError {
	op := name
	switch name {
	case "_<=_", "_>_", "_>=_":
		op = "_<_"
	}
	if types, ok := operandTraits[op]; ok {
		// A string, timestamp or duration receives the call itself, and
		// refuses it in the plain words.
		t := string(valueType(args[0]))
		if !slices.Contains(strings.Fields(types), t) && !slices.Contains(receivers, t) {
			return errorf("no such overload: %s", name)
		}
		return errNoOverload
	}
	if strings.ContainsAny(name[:1], "_!-@") || slices.Contains(single, name) {
		return errNoOverload
	}
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = string(valueType(a))
	}
	switch name {
	case "math.greatest":
		name = "math.@max"
	case "math.least":
		name = "math.@min"
	}
	return errorf("no such overload: %s(%s)", name, strings.Join(names, ", "))
}

// logic is && (or || when or is set): a side that decides absorbs an
// error or a non-bool on the other side, whichever side it is.
func (e *evaluator) logic(or bool, left, right exprNode, s *scope) any {
	l := e.eval(left, s)
	if b, ok := l.(bool); ok && b == or {
		return b
	}
	r := e.eval(right, s)
	if b, ok := r.(bool); ok && b == or {
		return b
	}
	_, lok := l.(bool)
	_, rok := r.(bool)
	switch {
	case lok && rok:
		return !or
	case isError(l):
		return l
	case isError(r):
		return r
	}
	return errNoOverload
}

func (e *evaluator) macro(n *macro, s *scope) any {
	if n.Kind == macroBind {
		return e.eval(n.Body, &scope{name: n.Var, up: s, lazy: n.Range})
	}
	r := e.eval(n.Range, s)
	if isError(r) {
		return r
	}
	switch n.Kind {
	case macroOptMap, macroOptFlatMap:
		o, ok := r.(optional)
		if !ok {
			return errorf("no such overload: hasValue(%s)", valueType(r))
		}
		if !o.has {
			return o
		}
		v := e.eval(n.Body, &scope{name: n.Var, up: s, val: o.v})
		if n.Kind == macroOptFlatMap || isError(v) {
			if _, ok := v.(optional); !ok && !isError(v) {
				return errNoOverload
			}
			return v
		}
		return optional{v, true}
	}
	if n.Kind == macroSortBy {
		list, ok := r.([]any)
		switch {
		case isMap(r):
			return errorf("no such overload: @sortByAssociatedKeys")
		case !ok:
			return errorf("got '%s', expected iterable type", goTypeName(r))
		}
		keys := make([]any, len(list))
		for i, it := range list {
			e.spend(10)
			if keys[i] = e.eval(n.Body, &scope{name: n.Var, up: s, val: norm(it)}); isError(keys[i]) {
				return keys[i]
			}
		}
		return sortBy(e, []any{list, keys})
	}
	var items []any
	switch c := r.(type) {
	case []any:
		items = c
	case map[string]any, *mapValue:
		items = mapKeys(c)
	default:
		return errorf("got '%s', expected iterable type", goTypeName(r))
	}
	var (
		firstErr any
		count    int
		out      []any
	)
	for _, it := range items {
		// The loop's condition, step and accumulator, as cel-go counts
		// them: building a list costs more than testing a predicate.
		if n.Kind == macroMap || n.Kind == macroFilter {
			e.spend(10)
		} else {
			e.spend(3)
		}
		sc := &scope{name: n.Var, up: s, val: norm(it)}
		if n.Kind == macroMap || n.Kind == macroFilter {
			keep := any(true)
			if n.Filter != nil || n.Kind == macroFilter {
				pred := n.Filter
				if n.Kind == macroFilter {
					pred = n.Body
				}
				keep = e.eval(pred, sc)
				if isError(keep) {
					return keep
				}
				if _, ok := keep.(bool); !ok {
					return errNoOverload
				}
			}
			if !keep.(bool) {
				continue
			}
			v := sc.val
			if n.Kind == macroMap {
				v = e.eval(n.Body, sc)
				if isError(v) {
					return v
				}
			}
			out = append(out, v)
			continue
		}
		p := e.eval(n.Body, sc)
		b, ok := p.(bool)
		if !ok {
			if n.Kind == macroExistsOne {
				if isError(p) {
					return p
				}
				return errNoOverload
			}
			if firstErr == nil {
				firstErr = p
				if !isError(p) {
					firstErr = errNoOverload
				}
			}
			continue
		}
		switch {
		case n.Kind == macroAll && !b:
			return false
		case n.Kind == macroExists && b:
			return true
		case n.Kind == macroExistsOne && b:
			count++
		}
	}
	switch n.Kind {
	case macroMap, macroFilter:
		if out == nil {
			out = []any{}
		}
		return out
	case macroExistsOne:
		return count == 1
	}
	if firstErr != nil {
		return firstErr
	}
	return n.Kind == macroAll
}

// goTypeName names a value's type as cel-go's Go types do, for the message
// of a comprehension over a value that is not a list or map.
func goTypeName(v any) string {
	switch v.(type) {
	case optional:
		return "*types.Optional"
	case typeValue:
		return "*types.Type"
	case time.Time:
		return "types.Timestamp"
	case time.Duration:
		return "types.Duration"
	case nil:
		return "types.Null"
	}
	t := valueType(v)
	return "types." + strings.ToUpper(string(t[:1])) + string(t[1:])
}

// conversions are the functions cel-go runs when it builds a program, if
// their argument is a constant.
var conversions = map[string]bool{"bool": true, "bytes": true, "double": true, "duration": true, "dyn": true,
	"int": true, "string": true, "timestamp": true, "type": true, "uint": true}

// constantError finds what cel-go refuses when it builds a program: a type
// conversion of a constant that fails, or a constant pattern of matches
// that does not compile. Lists and maps of constants are constants too.
func constantError(n exprNode) *evalError {
	_, _, err := constant(n)
	return err
}

// constant reports the value of n if it is a constant as cel-go sees it,
// and the first error of a conversion or pattern anywhere inside n.
func constant(n exprNode) (val any, ok bool, err *evalError) {
	// all visits every child, so that an error anywhere is found, and
	// reports whether all of them are constants.
	all := func(nodes ...exprNode) ([]any, bool, *evalError) {
		vals, every := make([]any, 0, len(nodes)), true
		for _, c := range nodes {
			if c == nil {
				continue
			}
			v, ok, err := constant(c)
			if err != nil {
				return nil, false, err
			}
			vals, every = append(vals, v), every && ok
		}
		return vals, every, nil
	}
	ev := &evaluator{ctx: context.Background(), act: Vars{}.activation(), b: &budget{limit: DefaultCostLimit}}
	switch n := n.(type) {
	case *literal:
		return n.Value, true, nil
	case *listExpr:
		_, every, err := all(n.Elems...)
		if !every || err != nil {
			return nil, false, err
		}
		return ev.eval(n, nil), true, nil
	case *mapExpr:
		every := true
		for _, en := range n.Entries {
			_, ok, err := all(en.Key, en.Value)
			if err != nil {
				return nil, false, err
			}
			every = every && ok
		}
		if !every {
			return nil, false, nil
		}
		return ev.eval(n, nil), true, nil
	case *selectExpr:
		_, _, err := all(n.Operand)
		return nil, false, err
	case *macro:
		_, _, err := all(n.Range, n.Filter, n.Body)
		return nil, false, err
	case *call:
		vals, every, err := all(append([]exprNode{n.Target}, n.Args...)...)
		if err != nil {
			return nil, false, err
		}
		if n.Func == "matches" && len(vals) == 2 {
			if _, ok, _ := constant(n.Args[len(n.Args)-1]); ok {
				if p, isString := vals[1].(string); isString {
					if _, err := compileRegexp(p); err != nil {
						return nil, false, errorf("%s", err)
					}
				}
			}
		}
		if n.Func == "_[_]" || n.Func == "_[?_]" {
			// A constant index becomes a qualifier of one of these types.
			if v, ok, _ := constant(n.Args[1]); ok {
				switch v.(type) {
				case string, int64, uint64, bool, float64:
				default:
					return nil, false, errorf("invalid qualifier type: %s", goTypeName(v))
				}
			}
		}
		if !conversions[n.Func] || n.Target != nil || len(n.Args) != 1 || !every {
			return nil, false, nil
		}
		v := ev.call(n, nil)
		if e, isErr := v.(*evalError); isErr {
			return nil, false, e
		}
		return v, true, nil
	}
	return nil, false, nil
}
