package cards

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// This file holds the functions of adaptive expressions that cards use,
// each checked when parsed (number and constant types of arguments) and
// evaluated as the adaptive-expressions npm package evaluates it, errors
// and missing values included.

// state is what an expression is evaluated against.
type state struct {
	mem memory
	// subst replaces a missing property by the text of its path, "${path}",
	// as the templating package does everywhere but in $when.
	subst bool
	cost  *cost
}

func (s *state) noSubst() *state {
	if !s.subst {
		return s
	}
	return &state{mem: s.mem, cost: s.cost}
}

// Limits of the work one expansion may do: lambdas nest loops, and each
// call may build a string or a list out of others.
const (
	maxCalls = 100000
	maxBuilt = 8 << 20 // bytes of strings and list elements built
)

// cost counts the work of one expansion.
type cost struct {
	calls, built int
}

var errTooCostly = thrownError(fmt.Sprintf("the template needs more than %d function calls or builds more than %d MB of values", maxCalls, maxBuilt>>20))

func (c *cost) exceeded() bool { return c.calls > maxCalls || c.built > maxBuilt }

func (c *cost) charge(v any) {
	switch x := v.(type) {
	case string:
		c.built += len(x)
	case []any:
		c.built += 8 * len(x)
	}
}

type evalError string

func (e evalError) Error() string { return string(e) }

// thrownError is an error the npm package throws rather than returns (a
// call of an unknown function): functions that turn errors into false do
// not catch it, and only a binding inside a longer string survives it.
type thrownError string

func (e thrownError) Error() string { return string(e) }

// swallowed tells whether a function that treats a failed argument as false
// may do so with err.
func swallowed(err error) bool {
	_, thrown := err.(thrownError)
	return !thrown
}

func errorf(format string, args ...any) error { return evalError(fmt.Sprintf(format, args...)) }

type function struct {
	name     string
	ret      returnType
	validate func(e *expr) error
	eval     func(e *expr, s *state) (any, error)
	// unknown marks a name that is no function of adaptive expressions (or
	// none this package implements); it fails when evaluated.
	unknown bool
}

func (e *expr) eval(s *state) (any, error) {
	if e.op == opConstant {
		return e.val, nil
	}
	s.cost.calls++
	if s.cost.exceeded() {
		return nil, errTooCostly
	}
	v, err := e.fn.eval(e, s)
	// A read gives a value the data already holds: it builds nothing.
	if err == nil && e.op != opAccessor && e.op != opElement {
		s.cost.charge(v)
	}
	return v, err
}

// call builds a call of the named function and checks it as the parser of
// adaptive expressions does.
func call(name string, args ...*expr) (*expr, error) {
	fn := functions[name]
	if fn == nil {
		fn = &function{name: name, ret: rtString, unknown: true, eval: func(*expr, *state) (any, error) {
			return nil, thrownError("Unknown function " + name)
		}}
	}
	e := &expr{op: fn.name, fn: fn, args: args}
	if fn.validate != nil {
		if err := fn.validate(e); err != nil {
			return nil, &ParseError{e.String(), err.Error()}
		}
	}
	return e, nil
}

var (
	accessorFunction = &function{name: opAccessor, ret: rtObject, eval: evalAccessor}
	elementFunction  = &function{name: opElement, ret: rtObject, eval: evalElement}
)

// Static checks.

func typeNames(t returnType) string {
	var names []string
	for _, n := range []struct {
		t    returnType
		name string
	}{{rtBoolean, "Boolean"}, {rtNumber, "Number"}, {rtObject, "Object"}, {rtString, "String"}, {rtArray, "Array"}} {
		if t&n.t != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ", ")
}

func checkType(e, child *expr, want returnType) error {
	ct := child.returnType()
	if want&rtObject == 0 && ct&rtObject == 0 && want&ct == 0 {
		return fmt.Errorf("%s is not of type %s", child, typeNames(want))
	}
	return nil
}

// arity checks the number of arguments and, unless want is rtObject, that
// no argument is a constant (or a call) of another type.
func arity(min, max int, want returnType) func(*expr) error {
	return func(e *expr) error {
		switch {
		case len(e.args) < min:
			return fmt.Errorf("%s needs at least %d arguments", e.fn.name, min)
		case len(e.args) > max:
			return fmt.Errorf("%s takes at most %d arguments", e.fn.name, max)
		}
		for _, a := range e.args {
			if err := checkType(e, a, want); err != nil {
				return err
			}
		}
		return nil
	}
}

// order checks arguments of the given types, then optional ones.
func order(optional []returnType, types ...returnType) func(*expr) error {
	return func(e *expr) error {
		if len(e.args) < len(types) || len(e.args) > len(types)+len(optional) {
			if len(optional) == 0 {
				return fmt.Errorf("%s takes %d arguments", e.fn.name, len(types))
			}
			return fmt.Errorf("%s takes %d to %d arguments", e.fn.name, len(types), len(types)+len(optional))
		}
		all := append(slices.Clone(types), optional...)
		for i, a := range e.args {
			if err := checkType(e, a, all[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

const many = math.MaxInt

// Checks of evaluated arguments.

type verifier func(v any, child *expr, pos int) error

func verifyNumber(v any, child *expr, _ int) error {
	if !isJSNumber(v) {
		return errorf("%s is not a number.", child)
	}
	return nil
}

func verifyInteger(v any, child *expr, _ int) error {
	if !isInteger(v) {
		return errorf("%s is not a integer.", child)
	}
	return nil
}

func verifyString(v any, child *expr, _ int) error {
	if _, ok := v.(string); !ok {
		return errorf("%s is not a string.", child)
	}
	return nil
}

func verifyStringOrUndefined(v any, child *expr, _ int) error {
	if _, ok := v.(string); !ok && !isUndefined(v) {
		return errorf("%s is neither a string nor a null object.", child)
	}
	return nil
}

func verifyNumberOrStringOrUndefined(v any, child *expr, _ int) error {
	if _, ok := v.(string); !ok && !isUndefined(v) && !isJSNumber(v) {
		return errorf("%s is neither a number nor string", child)
	}
	return nil
}

func verifyNotNull(v any, child *expr, _ int) error {
	if isNullish(v) {
		return errorf("%s is null.", child)
	}
	return nil
}

func verifyNumberOrNumericList(v any, child *expr, _ int) error {
	if isJSNumber(v) {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return errorf("%s is neither a list nor a number.", child)
	}
	for _, item := range list {
		if !isJSNumber(item) {
			return errorf("%s is not a number in %s.", toJSString(item), child)
		}
	}
	return nil
}

func verifyNumericList(v any, child *expr, _ int) error {
	list, ok := v.([]any)
	if !ok {
		return errorf("%s is not a list.", child)
	}
	for _, item := range list {
		if !isJSNumber(item) {
			return errorf("%s is not a number in %s.", toJSString(item), child)
		}
	}
	return nil
}

// verifyContainer accepts what JavaScript's typeof calls "string" or
// "object", null included.
func verifyContainer(v any, child *expr, _ int) error {
	switch v.(type) {
	case string, []any, map[string]any, nil:
		return nil
	}
	return errorf("%s must be a string, list, map or object.", child)
}

func verifyContainerOrNull(v any, child *expr, pos int) error {
	if isUndefined(v) {
		return nil
	}
	return verifyContainer(v, child, pos)
}

// Evaluation helpers.

func evalArgs(e *expr, s *state, verify verifier) ([]any, error) {
	args := make([]any, 0, len(e.args))
	for i, a := range e.args {
		v, err := a.eval(s)
		if err != nil {
			return nil, err
		}
		if verify != nil {
			if err := verify(v, a, i); err != nil {
				return nil, err
			}
		}
		args = append(args, v)
	}
	return args, nil
}

func apply(f func(args []any) (any, error), verify verifier) func(*expr, *state) (any, error) {
	return func(e *expr, s *state) (any, error) {
		args, err := evalArgs(e, s, verify)
		if err != nil {
			return nil, err
		}
		return f(args)
	}
}

// sequence folds the arguments from the left with a binary f.
func sequence(f func(a, b any) (any, error), verify verifier) func(*expr, *state) (any, error) {
	return apply(fold(f), verify)
}

func fold(f func(a, b any) (any, error)) func(args []any) (any, error) {
	return func(args []any) (any, error) {
		acc := args[0]
		for _, a := range args[1:] {
			var err error
			if acc, err = f(acc, a); err != nil {
				return nil, err
			}
		}
		return acc, nil
	}
}

// comparison evaluates its arguments without substitution; an argument
// that fails makes the result false rather than an error.
func comparison(f func(args []any) (bool, error), verify verifier) func(*expr, *state) (any, error) {
	return func(e *expr, s *state) (any, error) {
		args, err := evalArgs(e, s.noSubst(), verify)
		if err != nil {
			if swallowed(err) {
				return false, nil
			}
			return nil, err
		}
		ok, err := f(args)
		if err != nil {
			// The npm package keeps false beside the error, which or()
			// passes on.
			return false, err
		}
		return ok, nil
	}
}

func numbers(f func(a, b float64) float64) func(a, b any) (any, error) {
	return func(a, b any) (any, error) { return f(a.(float64), b.(float64)), nil }
}

func stringOrEmpty(v any) string {
	s, _ := v.(string)
	return s
}

// jsRound is JavaScript's Math.round: halves go up.
func jsRound(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	return math.Floor(f + 0.5)
}

func roundTo(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return jsRound(f*p) / p
}

func compare(name string, ok func(c int) bool) *function {
	return &function{name: name, ret: rtBoolean, validate: arity(2, 2, rtObject), eval: comparison(func(args []any) (bool, error) {
		switch a := args[0].(type) {
		case float64:
			if b, isNum := args[1].(float64); isNum {
				if math.IsNaN(a) || math.IsNaN(b) {
					return false, nil
				}
				return ok(cmpFloat(a, b)), nil
			}
		case string:
			if b, isStr := args[1].(string); isStr {
				return ok(compareUTF16(a, b)), nil
			}
		}
		return false, errorf("%s and %s must be comparable.", toJSString(args[0]), toJSString(args[1]))
	}, verifyNotNull)}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func numberTransform(name string, f func(float64) (any, error)) *function {
	return &function{name: name, ret: rtNumber, validate: arity(1, 1, rtNumber), eval: apply(func(args []any) (any, error) {
		return f(args[0].(float64))
	}, verifyNumber)}
}

// stringTransform is a function of a string whose result holds at most
// growth times its bytes: Unicode's full case mappings turn a character
// into up to three.
func stringTransform(name string, max, growth int, f func(string) string) *function {
	measure := func(args []any) measured { return measured{n: growth * len(stringOrEmpty(args[0]))} }
	return &function{name: name, ret: rtString, validate: arity(1, max, rtString), eval: sized(name, measure, func(args []any) (any, error) {
		return f(stringOrEmpty(args[0])), nil
	}, verifyStringOrUndefined)}
}

func minMax(name string, start float64, pick func(a, b float64) float64) *function {
	return &function{name: name, ret: rtNumber, validate: arity(1, many, rtObject), eval: apply(func(args []any) (any, error) {
		acc := start
		for _, a := range args {
			if list, ok := a.([]any); ok {
				for _, v := range list {
					acc = pick(acc, v.(float64))
				}
			} else {
				acc = pick(acc, a.(float64))
			}
		}
		return acc, nil
	}, verifyNumberOrNumericList)}
}

// jsMin and jsMax are Math.min and Math.max: NaN wins.
func jsMin(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

func jsMax(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

func indexOf(name string, last bool) *function {
	return &function{name: name, ret: rtNumber, validate: order(nil, rtString|rtArray, rtObject), eval: apply(func(args []any) (any, error) {
		switch a := args[0].(type) {
		case nil, undefinedValue, string:
			if _, ok := args[1].(string); !ok && !isUndefined(args[1]) {
				return nil, errorf("Can only look for indexof string in %s", name)
			}
			s, sub := stringOrEmpty(a), stringOrEmpty(args[1])
			if last {
				return float64(utf16LastIndex(s, sub)), nil
			}
			return float64(utf16Index(s, sub)), nil
		case []any:
			found := -1
			for i, v := range a {
				if sameReference(v, args[1]) {
					found = i
					if !last {
						break
					}
				}
			}
			return float64(found), nil
		}
		return nil, errorf("%s works only on string or list.", name)
	}, nil)}
}

// functions maps the names an expression may call, aliases included, to
// their functions.
var functions = map[string]*function{}

func init() {
	add := &function{name: "+", ret: rtString | rtNumber, validate: arity(2, many, rtString|rtNumber), eval: sized("+", textTotal, fold(func(a, b any) (any, error) {
		if isNullish(a) && isJSNumber(b) || isNullish(b) && isJSNumber(a) {
			return nil, errorf("Operator '+' or add cannot be applied to operands of type 'number' and null object.")
		}
		if isJSNumber(a) && isJSNumber(b) {
			return a.(float64) + b.(float64), nil
		}
		var s string
		if !isNullish(a) {
			s = toJSString(a)
		}
		if !isNullish(b) {
			s += toJSString(b)
		}
		return s, nil
	}), verifyNumberOrStringOrUndefined)}
	numeric := func(name string, f func(a, b float64) float64, verify verifier) *function {
		return &function{name: name, ret: rtNumber, validate: arity(2, many, rtNumber), eval: sequence(numbers(f), verify)}
	}
	sub := numeric("-", func(a, b float64) float64 { return a - b }, verifyNumber)
	mul := numeric("*", func(a, b float64) float64 { return a * b }, verifyNumber)
	div := numeric("/", func(a, b float64) float64 {
		if isInteger(a) && isInteger(b) {
			return math.Floor(a / b)
		}
		return a / b
	}, func(v any, child *expr, pos int) error {
		if err := verifyNumber(v, child, pos); err != nil {
			return err
		}
		if pos > 0 && v.(float64) == 0 {
			return errorf("Cannot divide by 0 from %s", child)
		}
		return nil
	})
	pow := &function{name: "^", ret: rtNumber, validate: arity(2, many, rtNumber), eval: sequence(func(a, b any) (any, error) {
		x, okx := a.(float64)
		y, oky := b.(float64)
		if !okx || !oky {
			return math.NaN(), nil
		}
		return math.Pow(x, y), nil
	}, verifyNumberOrNumericList)}
	mod := &function{name: "%", ret: rtNumber, validate: arity(2, 2, rtNumber), eval: apply(func(args []any) (any, error) {
		if args[1].(float64) == 0 {
			return nil, errorf("Cannot mod by 0.")
		}
		return math.Mod(args[0].(float64), args[1].(float64)), nil
	}, verifyInteger)}
	equals := &function{name: "==", ret: rtBoolean, validate: arity(2, 2, rtObject), eval: comparison(func(args []any) (bool, error) {
		return commonEquals(args[0], args[1]), nil
	}, nil)}
	notEquals := &function{name: "!=", ret: rtBoolean, validate: arity(2, 2, rtObject), eval: comparison(func(args []any) (bool, error) {
		return !commonEquals(args[0], args[1]), nil
	}, nil)}
	and := &function{name: "&&", ret: rtBoolean, validate: arity(1, many, rtObject), eval: func(e *expr, s *state) (any, error) {
		for _, a := range e.args {
			v, err := a.eval(s.noSubst())
			if err != nil && !swallowed(err) {
				return nil, err
			}
			if err != nil || !isLogicTrue(v) {
				return false, nil
			}
		}
		return true, nil
	}}
	// or gives true, or else the value of its last argument as it came: a
	// null, or undefined where that argument failed.
	or := &function{name: "||", ret: rtBoolean, validate: arity(1, many, rtObject), eval: func(e *expr, s *state) (any, error) {
		var result any = false
		for _, a := range e.args {
			v, err := a.eval(s.noSubst())
			if err != nil {
				if !swallowed(err) {
					return nil, err
				}
				if v == nil {
					v = undefined
				}
			} else if isLogicTrue(v) {
				return true, nil
			}
			result = v
		}
		return result, nil
	}}
	not := &function{name: "!", ret: rtBoolean, validate: arity(1, 1, rtObject), eval: func(e *expr, s *state) (any, error) {
		v, err := e.args[0].eval(s.noSubst())
		if err != nil {
			if swallowed(err) {
				return true, nil
			}
			return nil, err
		}
		return !isLogicTrue(v), nil
	}}
	concat := &function{name: "concat", ret: rtString | rtArray, validate: arity(1, many, rtObject), eval: sized("concat", concatSize, fold(func(a, b any) (any, error) {
		al, aList := a.([]any)
		bl, bList := b.([]any)
		switch {
		case isNullish(a) && isNullish(b):
			return undefined, nil
		case isNullish(a) && bList:
			return b, nil
		case isNullish(b) && aList:
			return a, nil
		case aList && bList:
			return append(slices.Clip(al), bl...), nil
		}
		return commonStringify(a) + commonStringify(b), nil
	}), nil)}
	coalesce := &function{name: "coalesce", ret: rtObject, validate: arity(1, many, rtObject), eval: apply(func(args []any) (any, error) {
		for _, a := range args {
			if !isNullish(a) {
				return a, nil
			}
		}
		return undefined, nil
	}, nil)}
	ifFn := &function{name: "if", ret: rtObject, validate: arity(3, 3, rtObject), eval: func(e *expr, s *state) (any, error) {
		cond, err := e.args[0].eval(s.noSubst())
		if err != nil && !swallowed(err) {
			return nil, err
		}
		if err == nil && isLogicTrue(cond) {
			return e.args[1].eval(s)
		}
		return e.args[2].eval(s)
	}}

	list := []*function{
		add, sub, mul, div, pow, mod, equals, notEquals, and, or, not, concat, coalesce, ifFn,
		compare("<", func(c int) bool { return c < 0 }),
		compare("<=", func(c int) bool { return c <= 0 }),
		compare(">", func(c int) bool { return c > 0 }),
		compare(">=", func(c int) bool { return c >= 0 }),
		minMax("min", math.Inf(1), jsMin),
		minMax("max", math.Inf(-1), jsMax),
		numberTransform("floor", func(f float64) (any, error) { return math.Floor(f), nil }),
		numberTransform("ceiling", func(f float64) (any, error) { return math.Ceil(f), nil }),
		numberTransform("abs", func(f float64) (any, error) { return math.Abs(f), nil }),
		numberTransform("sqrt", func(f float64) (any, error) {
			if f < 0 {
				return nil, errorf("Do not support square root extraction of negative numbers.")
			}
			return math.Sqrt(f), nil
		}),
		{name: "round", ret: rtNumber, validate: arity(1, 2, rtNumber), eval: apply(func(args []any) (any, error) {
			digits := 0.0
			if len(args) == 2 {
				if !isInteger(args[1]) {
					return nil, errorf("The second parameter %s must be an integer.", toJSString(args[1]))
				}
				digits = args[1].(float64)
			}
			if digits < 0 || digits > 15 {
				return nil, errorf("The second parameter %s must be an integer between 0 and 15;", toJSString(args[1]))
			}
			return roundTo(args[0].(float64), int(digits)), nil
		}, verifyNumber)},
		{name: "sum", ret: rtNumber, validate: order(nil, rtArray), eval: apply(func(args []any) (any, error) {
			list := args[0].([]any)
			if len(list) == 0 {
				return nil, errorf("Reduce of empty array with no initial value")
			}
			total := 0.0
			for _, v := range list {
				total += v.(float64)
			}
			return total, nil
		}, verifyNumericList)},
		{name: "average", ret: rtNumber, validate: arity(1, 1, rtObject), eval: apply(func(args []any) (any, error) {
			list := args[0].([]any)
			if len(list) == 0 {
				return nil, errorf("Reduce of empty array with no initial value")
			}
			total := 0.0
			for _, v := range list {
				total += v.(float64)
			}
			return total / float64(len(list)), nil
		}, verifyNumericList)},
		{name: "exists", ret: rtBoolean, validate: arity(1, 1, rtObject), eval: comparison(func(args []any) (bool, error) {
			return !isNullish(args[0]), nil
		}, verifyNotNull)},
		{name: "empty", ret: rtBoolean, validate: arity(1, 1, rtObject), eval: comparison(func(args []any) (bool, error) {
			switch x := args[0].(type) {
			case nil, undefinedValue:
				return true, nil
			case string:
				return x == "", nil
			case []any:
				return len(x) == 0, nil
			case map[string]any:
				return len(x) == 0, nil
			}
			return false, nil
		}, verifyContainerOrNull)},
		{name: "bool", ret: rtBoolean, validate: arity(1, 1, rtObject), eval: comparison(func(args []any) (bool, error) {
			if isJSNumber(args[0]) {
				return args[0].(float64) != 0, nil
			}
			if falsePattern.MatchString(toJSString(args[0])) {
				return false, nil
			}
			return isLogicTrue(args[0]), nil
		}, nil)},
		// JavaScript's toLocaleUpperCase and toLocaleLowerCase in en-US
		// apply Unicode's full case mappings (ß becomes SS, a final Σ
		// becomes ς), which strings.ToUpper and ToLower do not. A Caser
		// keeps state, so each call makes its own.
		stringTransform("toUpper", 2, 3, func(s string) string { return cases.Upper(language.AmericanEnglish).String(s) }),
		stringTransform("toLower", 2, 3, func(s string) string { return cases.Lower(language.AmericanEnglish).String(s) }),
		stringTransform("trim", 1, 1, func(s string) string {
			// JavaScript's white space: Go's but for U+0085, and U+FEFF.
			return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) && r != '\u0085' || r == '\ufeff' })
		}),
		{name: "length", ret: rtNumber, validate: arity(1, 1, rtString), eval: apply(func(args []any) (any, error) {
			return float64(utf16Len(stringOrEmpty(args[0]))), nil
		}, verifyStringOrUndefined)},
		{name: "substring", ret: rtString, validate: order([]returnType{rtNumber}, rtString, rtNumber), eval: evalSubstring},
		{name: "replace", ret: rtString, validate: arity(3, 3, rtString), eval: sized("replace", replaceSize, func(args []any) (any, error) {
			old := stringOrEmpty(args[1])
			if old == "" {
				return nil, errorf("%s should be a string with length at least 1", toJSString(args[1]))
			}
			return strings.ReplaceAll(stringOrEmpty(args[0]), old, stringOrEmpty(args[2])), nil
		}, verifyStringOrUndefined)},
		{name: "split", ret: rtArray, validate: arity(1, 2, rtString), eval: sized("split", splitSize, func(args []any) (any, error) {
			s, sep := stringOrEmpty(args[0]), ""
			if len(args) == 2 {
				sep = stringOrEmpty(args[1])
			}
			var parts []string
			if sep == "" {
				parts = utf16Units(s)
			} else {
				parts = strings.Split(s, sep)
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return out, nil
		}, verifyStringOrUndefined)},
		{name: "join", ret: rtString, validate: order([]returnType{rtString}, rtArray, rtString), eval: sized("join", joinSize, func(args []any) (any, error) {
			list, ok := args[0].([]any)
			if !ok {
				return nil, errorf("%s is not a list.", toJSString(args[0]))
			}
			sep := func(v any) string {
				if isUndefined(v) {
					return ","
				}
				return toJSString(v)
			}
			if len(args) == 2 {
				return joinJS(list, sep(args[1])), nil
			}
			if len(list) < 3 {
				return joinJS(list, sep(args[2])), nil
			}
			return joinJS(list[:len(list)-1], sep(args[1])) + toJSString(args[2]) + elementString(list[len(list)-1]), nil
		}, nil)},
		{name: "startsWith", ret: rtBoolean, validate: arity(2, 2, rtString), eval: apply(func(args []any) (any, error) {
			return strings.HasPrefix(stringOrEmpty(args[0]), stringOrEmpty(args[1])), nil
		}, verifyStringOrUndefined)},
		{name: "endsWith", ret: rtBoolean, validate: arity(2, 2, rtString), eval: apply(func(args []any) (any, error) {
			return strings.HasSuffix(stringOrEmpty(args[0]), stringOrEmpty(args[1])), nil
		}, verifyStringOrUndefined)},
		indexOf("indexOf", false),
		indexOf("lastIndexOf", true),
		{name: "contains", ret: rtBoolean, validate: arity(2, 2, rtObject), eval: func(e *expr, s *state) (any, error) {
			args, err := evalArgs(e, s, nil)
			if err != nil {
				if swallowed(err) {
					return false, nil
				}
				return nil, err
			}
			switch a := args[0].(type) {
			case string:
				if b, ok := args[1].(string); ok {
					return strings.Contains(a, b), nil
				}
			case []any:
				for _, v := range a {
					if commonEquals(v, args[1]) {
						return true, nil
					}
				}
				return false, nil
			}
			if b, ok := args[1].(string); ok {
				return !isUndefined(accessProperty(args[0], b)), nil
			}
			return false, nil
		}},
		{name: "count", ret: rtNumber, validate: order(nil, rtString|rtArray), eval: apply(func(args []any) (any, error) {
			switch x := args[0].(type) {
			case string:
				return float64(utf16Len(x)), nil
			case []any:
				return float64(len(x)), nil
			case map[string]any:
				return float64(len(x)), nil
			}
			return nil, errorf("Cannot convert undefined or null to object")
		}, verifyContainer)},
		{name: "first", ret: rtObject, validate: arity(1, 1, rtObject), eval: apply(func(args []any) (any, error) {
			return firstOrLast(args[0], false), nil
		}, nil)},
		{name: "last", ret: rtObject, validate: arity(1, 1, rtObject), eval: apply(func(args []any) (any, error) {
			return firstOrLast(args[0], true), nil
		}, nil)},
		{name: "createArray", ret: rtArray, eval: apply(func(args []any) (any, error) {
			return slices.Clone(args), nil
		}, nil)},
		{name: "json", ret: rtObject, validate: order(nil, rtString), eval: apply(func(args []any) (any, error) {
			s, ok := args[0].(string)
			if !ok {
				return nil, errorf("%s is not a string", toJSString(args[0]))
			}
			var v any
			if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &v); err != nil {
				return nil, errorf("%s is not valid JSON: %v", s, err)
			}
			return v, nil
		}, nil)},
		{name: "setProperty", ret: rtObject, validate: order(nil, rtObject, rtString, rtObject), eval: sized("setProperty", propertiesSize, func(args []any) (any, error) {
			obj, ok := args[0].(map[string]any)
			if !ok {
				return nil, errorf("%s is not an object", toJSString(args[0]))
			}
			out := make(map[string]any, len(obj)+1)
			for k, v := range obj {
				out[k] = v
			}
			out[toJSString(args[1])] = args[2]
			return out, nil
		}, nil)},
		{name: "string", ret: rtString, validate: order([]returnType{rtString}, rtObject), eval: sized("string", stringSize, func(args []any) (any, error) {
			switch x := args[0].(type) {
			case string:
				return x, nil
			case float64:
				if math.IsNaN(x) {
					return commonStringify(x), nil
				}
				precision := 0
				if _, frac, ok := strings.Cut(jsNumber(x), "."); ok {
					precision = len(frac)
				}
				return formatFixed(x, precision), nil
			}
			return commonStringify(args[0]), nil
		}, nil)},
		{name: "int", ret: rtNumber, validate: arity(1, 1, rtObject), eval: apply(func(args []any) (any, error) {
			switch x := args[0].(type) {
			case string:
				f, ok := jsParseInt(x)
				if !ok {
					return nil, errorf("parameter %s is not a valid number string.", x)
				}
				return f, nil
			case float64:
				f, ok := jsParseInt(jsNumber(x))
				if !ok {
					return math.NaN(), nil
				}
				return f, nil
			}
			return undefined, nil
		}, nil)},
		{name: "float", ret: rtNumber, validate: arity(1, 1, rtObject), eval: apply(func(args []any) (any, error) {
			switch x := args[0].(type) {
			case string:
				f, ok := jsParseFloat(x)
				if !ok {
					return nil, errorf("parameter %s is not a valid number string.", x)
				}
				return f, nil
			case float64:
				return x, nil
			}
			return undefined, nil
		}, nil)},
		{name: "formatNumber", ret: rtString, validate: order([]returnType{rtString}, rtNumber, rtNumber), eval: apply(func(args []any) (any, error) {
			if !isJSNumber(args[0]) {
				return nil, errorf("formatNumber first argument %s must be a number", toJSString(args[0]))
			}
			if !isJSNumber(args[1]) {
				return nil, errorf("formatNumber second argument %s must be a number", toJSString(args[1]))
			}
			p := args[1].(float64)
			if !isInteger(p) || p < 0 || p > 100 {
				return nil, errorf("formatNumber second argument %s must be a whole number from 0 to 100", jsNumber(p))
			}
			// d3-format writes at most 20 decimals.
			return formatFixed(roundTo(args[0].(float64), int(p)), min(int(p), 20)), nil
		}, nil)},
		{name: "formatDateTime", ret: rtString, validate: order([]returnType{rtString, rtString}, rtString), eval: evalFormatDateTime},
		timeTransform("addDays", addDays),
		timeTransform("addHours", addHours),
		timeTransform("addMinutes", addMinutes),
		timeTransform("addSeconds", addSeconds),
		{name: "foreach", ret: rtArray, validate: validateLambda, eval: evalForeach},
		{name: "select", ret: rtArray, validate: validateLambda, eval: evalForeach},
		{name: "where", ret: rtArray, validate: validateLambda, eval: evalWhere},
		datePart("dayOfWeek", func(t timeValue) float64 { return float64(t.Weekday()) }),
		datePart("dayOfMonth", func(t timeValue) float64 { return float64(t.Day()) }),
		datePart("dayOfYear", func(t timeValue) float64 { return float64(t.YearDay()) }),
		datePart("month", func(t timeValue) float64 { return float64(t.Month()) }),
		datePart("year", func(t timeValue) float64 { return float64(t.Year()) }),
	}
	for _, f := range list {
		functions[f.name] = f
	}
	for alias, name := range map[string]string{
		"add": "+", "sub": "-", "mul": "*", "div": "/", "exp": "^", "mod": "%",
		"equals": "==", "less": "<", "lessOrEquals": "<=", "greater": ">", "greaterOrEquals": ">=",
		"and": "&&", "or": "||", "not": "!", "&": "concat", "??": "coalesce",
	} {
		functions[alias] = functions[name]
	}
}

var falsePattern = regexp.MustCompile(`(?i)false`)

func firstOrLast(v any, last bool) any {
	switch x := v.(type) {
	case string:
		u := utf16Units(x)
		if len(u) == 0 {
			return undefined
		}
		if last {
			return u[len(u)-1]
		}
		return u[0]
	case []any:
		if len(x) == 0 {
			return undefined
		}
		if last {
			return x[len(x)-1]
		}
		return x[0]
	}
	return undefined
}

// elementString is how Array.prototype.join writes an element.
func elementString(v any) string {
	if isNullish(v) {
		return ""
	}
	return toJSString(v)
}

func joinJS(list []any, sep string) string {
	parts := make([]string, len(list))
	for i, v := range list {
		parts[i] = elementString(v)
	}
	return strings.Join(parts, sep)
}

func evalSubstring(e *expr, s *state) (any, error) {
	v, err := e.args[0].eval(s)
	if err != nil {
		return nil, err
	}
	str, ok := v.(string)
	if !ok {
		if isUndefined(v) {
			return "", nil
		}
		return nil, errorf("%s is neither a string nor a null object.", e.args[0])
	}
	n := utf16Len(str)
	startV, err := e.args[1].eval(s)
	if err != nil {
		return nil, err
	}
	if !isInteger(startV) {
		return nil, errorf("%s is not an integer.", e.args[1])
	}
	start := startV.(float64)
	if start < 0 || start > float64(n) {
		return nil, errorf("%s=%s which is out of range for %s", e.args[1], jsNumber(start), str)
	}
	length := float64(n) - start
	if len(e.args) == 3 {
		lv, err := e.args[2].eval(s)
		if err != nil {
			return nil, err
		}
		if !isInteger(lv) {
			return nil, errorf("%s is not an integer", e.args[2])
		}
		length = lv.(float64)
		if length < 0 || start+length > float64(n) {
			return nil, errorf("%s=%s which is out of range for %s", e.args[2], jsNumber(length), str)
		}
	}
	return utf16Slice(str, int(start), int(start+length)), nil
}

// formatFixed writes f with the given number of decimals and thousands
// separators, as d3-format's ",.Nf" does in the en-US locale (a minus sign
// is U+2212).
func formatFixed(f float64, decimals int) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	neg := f < 0 || f == 0 && math.Signbit(f)
	s := strconv.FormatFloat(math.Abs(f), 'f', decimals, 64)
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	out := b.String()
	// d3 drops the sign of a negative number that rounds to zero.
	if neg && strings.Trim(out, "0.,") != "" {
		out = "\u2212" + out
	}
	return out
}

// Property and index access.

// memory is where identifiers are looked up: the template's $data, $root,
// $index and $host, or a value reached by an expression.
type memory interface {
	getValue(path string) any
}

// objectMemory is adaptive expressions' SimpleObjectMemory.
type objectMemory struct{ root any }

func (m objectMemory) getValue(path string) any {
	if isUndefined(m.root) || path == "" {
		return undefined
	}
	return walkPath(m.root, splitPath(path))
}

// splitPath splits a path such as a.b[0]['c'] at dots and brackets, and
// takes the quotes off quoted parts.
func splitPath(path string) []string {
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	for i, part := range parts {
		if len(part) >= 2 && (part[0] == '"' && part[len(part)-1] == '"' || part[0] == '\'' && part[len(part)-1] == '\'') {
			parts[i] = part[1 : len(part)-1]
		}
	}
	return parts
}

// walkPath follows parts from cur: an index into a list where the part
// reads as a number, else a property.
func walkPath(cur any, parts []string) any {
	var value any = undefined
	for _, part := range parts {
		if i, ok := jsParseInt(part); ok {
			if _, isList := cur.([]any); isList {
				var err error
				if value, err = accessIndex(cur, i); err != nil {
					return undefined
				}
				cur = value
				continue
			}
		}
		value = accessProperty(cur, part)
		cur = value
	}
	return value
}

func accessIndex(v any, i float64) (any, error) {
	if isNullish(v) {
		return undefined, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errorf("%s is not a collection.", toJSString(v))
	}
	if i < 0 || i >= float64(len(list)) {
		return nil, errorf("%s is out of range for %s", jsNumber(i), toJSString(v))
	}
	return list[int(i)], nil
}

// accessProperty reads a property whatever the case of its name, as
// adaptive expressions do. Where two names differ only in case the exact
// one wins, else the first in sorted order.
func accessProperty(v any, name string) any {
	switch x := v.(type) {
	case nil, undefinedValue:
		return undefined
	case bool:
		if !x {
			return undefined
		}
	case float64:
		return undefined
	case string:
		if x == "" {
			return undefined
		}
		if i, err := strconv.Atoi(name); err == nil && strconv.Itoa(i) == name && i < utf16Len(x) {
			return utf16Slice(x, i, i+1)
		}
	case []any:
		if i, err := strconv.Atoi(name); err == nil && strconv.Itoa(i) == name && i < len(x) {
			return x[i]
		}
	case map[string]any:
		if val, ok := x[name]; ok {
			return val
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if strings.EqualFold(k, name) {
				return x[k]
			}
		}
	}
	return undefined
}

// accumulatePath turns a chain of property and constant index accesses
// into a path such as items[0].name, as adaptive expressions do before
// asking memory; left is what remains to evaluate first, if anything.
func accumulatePath(e *expr, s *state) (path string, left *expr, err error) {
	left = e
	for left != nil {
		switch left.op {
		case opAccessor:
			path = left.args[0].val.(string) + "." + path
			if len(left.args) == 2 {
				left = left.args[1]
			} else {
				left = nil
			}
			continue
		case opElement:
			v, err := left.args[1].eval(s)
			if err != nil {
				return "", nil, err
			}
			if f, ok := v.(float64); ok && !math.IsNaN(f) {
				if _, ok := jsParseInt(jsNumber(f)); ok {
					path = "[" + jsNumber(f) + "]." + path
				} else {
					return "", nil, errorf("%s doesn't return an int or string", left.args[1])
				}
			} else if str, ok := v.(string); ok {
				path = "['" + str + "']." + path
			} else {
				return "", nil, errorf("%s doesn't return an int or string", left.args[1])
			}
			left = left.args[0]
			continue
		}
		break
	}
	path = strings.TrimRight(path, ".")
	path = strings.ReplaceAll(path, ".[", "[")
	return path, left, nil
}

func evalAccessor(e *expr, s *state) (any, error) {
	path, left, err := accumulatePath(e, s)
	if err != nil {
		return nil, err
	}
	mem := s.mem
	if left != nil {
		scope, err := left.eval(s)
		if err != nil {
			return nil, err
		}
		mem = objectMemory{scope}
	}
	var v any = undefined
	if path != "" {
		v = mem.getValue(path)
	}
	if isUndefined(v) && s.subst {
		return "${" + path + "}", nil
	}
	return v, nil
}

func evalElement(e *expr, s *state) (any, error) {
	inst, err := e.args[0].eval(s)
	if err != nil {
		return nil, err
	}
	idx, err := e.args[1].eval(s.noSubst())
	if err != nil {
		return nil, err
	}
	switch x := idx.(type) {
	case float64:
		if isInteger(x) {
			return accessIndex(inst, x)
		}
	case string:
		return accessProperty(inst, x), nil
	}
	return nil, errorf("Could not coerce %s to an int or string.", e.args[1])
}

// Lambdas: foreach(list, x, body), also written foreach(list, x => body),
// and its siblings select and where.

func validateLambda(e *expr) error {
	if len(e.args) != 3 {
		return fmt.Errorf("%s takes 3 arguments: a list, a variable name and an expression", e.fn.name)
	}
	if a := e.args[1]; a.op != opAccessor || len(a.args) != 1 {
		return fmt.Errorf("the second argument of %s must be a variable name, not %s", e.fn.name, a)
	}
	return nil
}

// stackedMemory puts a lambda's variable in front of the memory around it.
type stackedMemory struct {
	name   string
	value  any
	parent memory
}

func (m stackedMemory) getValue(path string) any {
	if parts := splitPath(path); len(parts) > 0 && strings.EqualFold(parts[0], m.name) {
		v := m.value
		if len(parts) > 1 {
			v = walkPath(v, parts[1:])
		}
		if !isUndefined(v) {
			return v
		}
	}
	return m.parent.getValue(path)
}

// lambdaList is what a lambda iterates: a list, or the {key, value} pairs
// of an object.
func lambdaList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case map[string]any:
		out := make([]any, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, map[string]any{"key": k, "value": x[k]})
		}
		return out, true
	}
	return nil, false
}

// lambda evaluates the body once per item, stopping where f says so.
func lambda(e *expr, s *state, list []any, f func(item, v any, err error) (bool, error)) error {
	name := e.args[1].args[0].val.(string)
	for _, item := range list {
		inner := &state{mem: stackedMemory{name, item, s.mem}, subst: s.subst, cost: s.cost}
		v, err := e.args[2].eval(inner)
		if err != nil && !swallowed(err) {
			return err
		}
		stop, err := f(item, v, err)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

func evalForeach(e *expr, s *state) (any, error) {
	v, err := e.args[0].eval(s)
	if err != nil {
		return nil, err
	}
	if !jsTruthy(v) {
		return nil, errorf("'%s' evaluated to null.", e.args[0])
	}
	list, ok := lambdaList(v)
	if !ok {
		return nil, errorf("%s is not a collection or structure object to run Foreach", e.args[0])
	}
	out := []any{}
	err = lambda(e, s, list, func(_, v any, err error) (bool, error) {
		if err != nil {
			return true, err
		}
		out = append(out, v)
		return false, nil
	})
	return out, err
}

func evalWhere(e *expr, s *state) (any, error) {
	v, err := e.args[0].eval(s)
	if err != nil {
		return nil, err
	}
	list, ok := lambdaList(v)
	if !ok {
		return nil, errorf("%s is not a collection or structure object to run Where", e.args[0])
	}
	out := []any{}
	err = lambda(e, s, list, func(item, v any, err error) (bool, error) {
		if err == nil && isLogicTrue(v) {
			out = append(out, item)
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if _, isList := v.([]any); isList {
		return out, nil
	}
	obj := map[string]any{}
	for _, item := range out {
		pair := item.(map[string]any)
		obj[pair["key"].(string)] = pair["value"]
	}
	return obj, nil
}
