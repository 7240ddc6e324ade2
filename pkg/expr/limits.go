package expr

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/functions"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
)

// Limits on what a program builds. cel-go charges the cost of a call after
// the call has built its result, and a single call such as
// s.replace("a", s) can build gigabytes from a few kilobytes, so the cost
// limit alone stops such a program only after the memory is spent. Every
// call that can build a string, bytes or list larger than its arguments is
// therefore sized before it runs (guard below): a result over a cap is
// refused, and what it would build is charged against a budget of the whole
// Eval call.
//
// A list or map holds references, so [a, a] costs two references to build
// but is twice a as soon as it is written out, and cel.bind doubling such a
// list d times reaches 2^d times a in d steps. Every list and map that a
// literal or a call builds is therefore charged at its encoded size (about
// its length as JSON), counting a value as often as it is referred to, and
// so is the work of comparing lists and maps, which walks them the same
// way.
const (
	// MaxStringBytes bounds a string or bytes value that a program or a
	// template builds.
	MaxStringBytes = 1 << 20
	// MaxListElements bounds a list that a program builds.
	MaxListElements = 100_000
	// MaxBuiltBytes bounds all that one Eval call builds, counting a
	// string or bytes value by its length, a list by elementBytes per
	// element, and every list or map a literal or call builds by its
	// encoded size.
	MaxBuiltBytes = 16 << 20
	// MaxComparedBytes bounds the lists and maps one Eval call compares
	// (==, !=, in, distinct), by their encoded size: comparing walks them
	// whole, however few references they are built of.
	MaxComparedBytes = 32 << 20
	// MaxResultBytes bounds the JSON-native value an Eval call returns,
	// by its encoded size.
	MaxResultBytes = 4 << 20
	// elementBytes is what one element of a list costs: the reference a
	// list holds.
	elementBytes = 16
	// scalarBytes is what a number, bool, null, timestamp or duration
	// counts for in an encoded size.
	scalarBytes = 8
)

// ErrTooLarge is matched (errors.Is) by the error of an evaluation that
// would have built a value over a limit.
var ErrTooLarge = errors.New("expression would build too large a value")

// tooLarge is the error of a refused call, with a message for the author of
// the workflow.
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string        { return e.msg }
func (e *tooLarge) Is(target error) bool { return target == ErrTooLarge }

// budget is what one Eval call has built and compared so far. The
// activation holds it under budgetName, a name CEL source cannot spell, so
// guarded calls find it from any scope of the evaluation.
type budget struct {
	built, compared uint64
	// sizes are the encoded sizes of the lists and maps the evaluation
	// built, so that a structure of shared references is walked once
	// however often it is referred to.
	sizes map[any]uint64
}

const budgetName = "@built"

// charge adds n bytes to what the evaluation has built, refusing it past
// MaxBuiltBytes.
func (b *budget) charge(what string, n uint64) error {
	total := b.built + n
	if total < b.built || total > MaxBuiltBytes {
		return &tooLarge{fmt.Sprintf("%s would bring what this expression builds to more than %s; an evaluation may build at most %s",
			what, size(MaxBuiltBytes), size(MaxBuiltBytes))}
	}
	b.built = total
	return nil
}

// chargeBuilt charges a list or map that a literal or call built at its
// encoded size, and keeps the size for the values that refer to it.
func (b *budget) chargeBuilt(what string, v ref.Val) error {
	switch v.(type) {
	case traits.MutableLister, traits.MutableMapper:
		return nil // charged as it grows (sizeAdd)
	case traits.Lister, traits.Mapper:
	default:
		return nil
	}
	n := b.encodedSize(v, MaxBuiltBytes-b.built+1)
	if err := b.charge(what, n); err != nil {
		return err
	}
	if reflect.TypeOf(v).Kind() == reflect.Pointer {
		if b.sizes == nil {
			b.sizes = map[any]uint64{}
		}
		b.sizes[v] = n
	}
	return nil
}

// kept is the size chargeBuilt kept of v. cel-go's lists and maps are
// pointers; another kind of value may not be a map key.
func (b *budget) kept(v ref.Val) (uint64, bool) {
	if b.sizes == nil || reflect.TypeOf(v).Kind() != reflect.Pointer {
		return 0, false
	}
	n, ok := b.sizes[v]
	return n, ok
}

// compare charges the walk of comparing v, times over.
func (b *budget) compare(what string, v ref.Val, times uint64) error {
	left := MaxComparedBytes - b.compared
	n := b.encodedSize(v, left+1)
	if times > 1 && n > 0 {
		n = min(n, left+1) * min(times, left+1)
	}
	if n > left {
		return &tooLarge{fmt.Sprintf("%s would bring what this expression compares to more than %s; an evaluation may compare at most %s",
			what, size(MaxComparedBytes), size(MaxComparedBytes))}
	}
	b.compared += n
	return nil
}

// encodedSize is about the length of v written as JSON, counting a value
// as often as lists and maps refer to it. It stops once past limit, and
// reads the sizes kept of what the evaluation built, so that it walks a
// structure of shared references once.
func (b *budget) encodedSize(v ref.Val, limit uint64) uint64 {
	switch v := v.(type) {
	case types.String:
		return uint64(len(v)) + 2
	case types.Bytes:
		return (uint64(len(v))+2)/3*4 + 2
	case *types.Optional:
		if v.HasValue() {
			return b.encodedSize(v.GetValue(), limit)
		}
		return scalarBytes
	case traits.Lister:
		if n, ok := b.kept(v); ok {
			return n
		}
		n := uint64(2)
		for it := v.Iterator(); it.HasNext() == types.True && n <= limit; {
			n += b.encodedSize(it.Next(), limit-n) + 1
		}
		return n
	case traits.Mapper:
		if n, ok := b.kept(v); ok {
			return n
		}
		n := uint64(2)
		for it := v.Iterator(); it.HasNext() == types.True && n <= limit; {
			k := it.Next()
			n += b.encodedSize(k, limit-n) + 2
			if n <= limit {
				n += b.encodedSize(v.Get(k), limit-n)
			}
		}
		return n
	}
	return scalarBytes
}

// result is the size of what a call will build: a string, bytes or list of
// n bytes or elements, at most.
type result struct {
	kind resultKind
	n    uint64
	// charge is what the call allocates, in bytes, when it is not n (or
	// n*elementBytes for a list): appending to the list a comprehension
	// accumulates builds only the appended part.
	charge uint64
	// partial says n counts only part of the result, once past a cap.
	partial bool
	// compared is what a compareResult walks, times over.
	compared ref.Val
	times    uint64
}

type resultKind int

const (
	noResult resultKind = iota // nothing to bound, such as a sum of numbers
	stringResult
	bytesResult
	listResult
	compareResult // a walk of lists or maps, which builds nothing
)

// sizer bounds the result of a call from its arguments.
type sizer func(args []ref.Val) result

// sizers are the functions that can build more than their arguments hold,
// and those that copy their whole argument, by name.
var sizers = map[string]sizer{
	"_+_":              sizeAdd,
	"replace":          sizeReplace,
	"join":             sizeJoin,
	"format":           sizeFormat,
	"split":            sizeSplit,
	"strings.quote":    sizeQuote,
	"base64.encode":    sizeBase64,
	"base64.encodeUrl": sizeBase64,
	"lowerAscii":       sizeASCIICase,
	"upperAscii":       sizeASCIICase,
	"reverse":          sizeReverse,
	"lists.range":      sizeRange,
	"flatten":          sizeFlatten,
	"@in":              sizeIn,
	"distinct":         sizeDistinct,
	"json.encode":      func(a []ref.Val) result { return partial(rendered(a[0], jsonStyle, 0, MaxStringBytes+1)) },
	"yaml.encode":      func(a []ref.Val) result { return partial(rendered(a[0], yamlStyle, 0, MaxStringBytes+1)) },
}

// growingAdd are the overloads of _+_ that build; an addition of numbers,
// durations or timestamps keeps cel-go's node as it is. A call whose
// overload the checker left open (dyn operands) is guarded too.
var growingAdd = map[string]bool{"": true, "add_string": true, "add_bytes": true, "add_list": true}

// guard is the decorator that puts a guardedCall in place of every call of
// a function in sizers.
type guard struct {
	impls interpreter.Dispatcher
}

// newGuard collects the implementations of env's functions as cel-go's
// planner does: by overload id, or by function name for a function whose
// one implementation dispatches on its arguments.
func newGuard(env *cel.Env) (*guard, error) {
	disp := interpreter.NewDispatcher()
	for _, fn := range env.Functions() {
		if _, ok := sizers[fn.Name()]; !ok {
			continue
		}
		bindings, err := fn.Bindings()
		if err != nil {
			return nil, err
		}
		if err := disp.Add(bindings...); err != nil {
			return nil, err
		}
	}
	return &guard{impls: disp}, nil
}

func (g *guard) decorate(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	switch i := i.(type) {
	case interpreter.InterpretableConstructor:
		if constant(i.InitVals()) {
			// Left to cel-go, which builds it once: its size is the source's.
			return i, nil
		}
		return &sizedConstructor{InterpretableConstructor: i}, nil
	case interpreter.InterpretableCall:
		if f := i.Function(); (f == operators.Equals || f == operators.NotEquals) && len(i.Args()) == 2 {
			return &comparison{InterpretableCall: i, lhs: i.Args()[0], rhs: i.Args()[1], negate: f == operators.NotEquals}, nil
		}
		return g.decorateCall(i)
	}
	return i, nil
}

func (g *guard) decorateCall(call interpreter.InterpretableCall) (interpreter.InterpretableV2, error) {
	sz, ok := sizers[call.Function()]
	if !ok || call.Function() == "_+_" && !growingAdd[call.OverloadID()] {
		return call, nil
	}
	if call.Function() == operators.In && len(call.Args()) == 2 {
		if _, ok := call.Args()[1].(interpreter.InterpretableConst); ok {
			return call, nil // left to cel-go, which turns it into a set
		}
	}
	impl, found := g.impls.FindOverload(call.OverloadID())
	if !found {
		impl, found = g.impls.FindOverload(call.Function())
	}
	if !found || impl.Async != nil || impl.LateBound {
		return nil, fmt.Errorf("expr: no implementation of %s to guard", call.Function())
	}
	return &guardedCall{InterpretableCall: call, args: call.Args(), impl: impl, size: sz}, nil
}

func constant(vals []interpreter.InterpretableV2) bool {
	for _, v := range vals {
		if _, ok := v.(interpreter.InterpretableConst); !ok {
			return false
		}
	}
	return true
}

func budgetOf(frame *interpreter.ExecutionFrame) *budget {
	if b, ok := frame.ResolveName(budgetName); ok {
		return b.(*budget)
	}
	return nil
}

// sizedConstructor charges the list or map a literal builds.
type sizedConstructor struct {
	interpreter.InterpretableConstructor
}

func (c *sizedConstructor) Eval(vars interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(vars, c.Exec)
}

func (c *sizedConstructor) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	v := c.InterpretableConstructor.Exec(frame)
	if b := budgetOf(frame); b != nil {
		what := "a list"
		if _, ok := v.(traits.Mapper); ok {
			what = "a map"
		}
		if err := b.chargeBuilt(what, v); err != nil {
			return types.LabelErrNode(c.ID(), types.WrapErr(err))
		}
	}
	return v
}

// comparison is == or != charging the walk of comparing two lists or maps
// before it compares them as cel-go's own node does.
type comparison struct {
	interpreter.InterpretableCall
	lhs, rhs interpreter.InterpretableV2
	negate   bool
}

func (c *comparison) Eval(vars interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(vars, c.Exec)
}

func (c *comparison) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	l := c.lhs.Exec(frame)
	r := ref.Val(types.UnknownType)
	res := l
	if !types.IsUnknownOrError(l) {
		r = c.rhs.Exec(frame)
		res = r
	}
	if !types.IsUnknownOrError(l) && !types.IsUnknownOrError(r) {
		res = c.compare(frame, l, r)
	}
	if costs := frame.CostTracker(); costs != nil {
		costs.EvalBinary(frame, c.ID(), c, l, r, res)
	}
	return res
}

func (c *comparison) compare(frame *interpreter.ExecutionFrame, l, r ref.Val) ref.Val {
	if aggregate(l) && aggregate(r) {
		if b := budgetOf(frame); b != nil {
			smaller, left := l, MaxComparedBytes-b.compared+1
			if b.encodedSize(r, left) < b.encodedSize(l, left) {
				smaller = r
			}
			what := "=="
			if c.negate {
				what = "!="
			}
			if err := b.compare(what, smaller, 1); err != nil {
				return types.LabelErrNode(c.ID(), types.WrapErr(err))
			}
		}
	}
	eq := types.Equal(l, r)
	if c.negate {
		return types.Bool(eq != types.True)
	}
	return eq
}

func aggregate(v ref.Val) bool {
	switch v.(type) {
	case traits.Lister, traits.Mapper:
		return true
	}
	return false
}

// guardedCall evaluates the arguments of a call, sizes its result and
// charges it, and only then calls the implementation cel-go's planner chose,
// recording the call's cost as cel-go's own node does. cel-go exposes the
// arguments of a planned call but not its implementation, and evaluating the
// original node would evaluate the arguments a second time, so the
// implementation is looked up by the same rule (newGuard).
type guardedCall struct {
	interpreter.InterpretableCall
	args []interpreter.InterpretableV2
	impl *functions.Overload
	size sizer
}

func (c *guardedCall) Eval(vars interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(vars, c.Exec)
}

func (c *guardedCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	args := make([]ref.Val, len(c.args))
	for i, arg := range c.args {
		v := arg.Exec(frame)
		if !c.impl.NonStrict && types.IsUnknownOrError(v) {
			return v
		}
		args[i] = v
	}
	if err := c.check(frame, args); err != nil {
		return types.LabelErrNode(c.ID(), types.WrapErr(err))
	}
	res := types.LabelErrNode(c.ID(), c.invoke(args))
	if err := c.chargeResult(frame, args, res); err != nil {
		res = types.LabelErrNode(c.ID(), types.WrapErr(err))
	}
	if costs := frame.CostTracker(); costs != nil {
		switch len(args) {
		case 1:
			costs.EvalUnary(frame, c.ID(), c, args[0], res)
		case 2:
			costs.EvalBinary(frame, c.ID(), c, args[0], args[1], res)
		default:
			costs.EvalVarArgs(frame, c.ID(), c, args, res)
		}
	}
	return res
}

// chargeResult charges a list or map the call built at its encoded size;
// of the list a comprehension accumulates, the part appended.
func (c *guardedCall) chargeResult(frame *interpreter.ExecutionFrame, args []ref.Val, res ref.Val) error {
	if !aggregate(res) {
		return nil
	}
	b := budgetOf(frame)
	if b == nil {
		return nil
	}
	what := c.Function()
	if what == "_+_" {
		what = "+"
		if _, growing := args[0].(traits.MutableLister); growing {
			return b.charge(what, b.encodedSize(args[1], MaxBuiltBytes-b.built+1))
		}
	}
	return b.chargeBuilt(what, res)
}

// check refuses a result over a cap and charges the budget.
func (c *guardedCall) check(frame *interpreter.ExecutionFrame, args []ref.Val) error {
	r := c.size(args)
	what := c.Function()
	if what == "_+_" {
		what = "+"
	}
	charge := r.charge
	switch r.kind {
	case noResult:
		return nil
	case compareResult:
		if b := budgetOf(frame); b != nil {
			return b.compare(what, r.compared, r.times)
		}
		return nil
	case stringResult, bytesResult:
		if r.n > MaxStringBytes {
			noun := "string"
			if r.kind == bytesResult {
				noun = "bytes value"
			}
			of := size(r.n)
			if r.partial {
				of = "more than " + size(MaxStringBytes)
			}
			return &tooLarge{fmt.Sprintf("%s would build a %s of %s; a %s may hold at most %s",
				what, noun, of, noun, size(MaxStringBytes))}
		}
		if charge == 0 {
			charge = r.n
		}
	case listResult:
		if r.n > MaxListElements {
			of := fmt.Sprint(r.n)
			if r.partial {
				of = fmt.Sprint("more than ", MaxListElements)
			}
			return &tooLarge{fmt.Sprintf("%s would build a list of %s elements; a list may hold at most %d",
				what, of, MaxListElements)}
		}
		if charge == 0 {
			charge = r.n * elementBytes
		}
	}
	if b := budgetOf(frame); b != nil {
		return b.charge(what, charge)
	}
	return nil
}

// invoke calls the implementation as cel-go's call nodes do.
func (c *guardedCall) invoke(args []ref.Val) ref.Val {
	impl := c.impl
	if impl.OperandTrait != 0 && !args[0].Type().HasTrait(impl.OperandTrait) {
		if recv, ok := args[0].(traits.Receiver); ok {
			return recv.Receive(c.Function(), c.OverloadID(), args[1:])
		}
		return types.NewErr("no such overload: %s", c.Function())
	}
	switch {
	case len(args) == 1 && impl.Unary != nil:
		return impl.Unary(args[0])
	case len(args) == 2 && impl.Binary != nil:
		return impl.Binary(args[0], args[1])
	case impl.Function != nil:
		return impl.Function(args...)
	}
	return types.NewErr("no such overload: %s", c.Function())
}

// The sizers. An argument of an unexpected type sizes as nothing: the
// implementation reports the error.

func str(n uint64) result { return result{kind: stringResult, n: n} }

// partial is a string whose size a walk counted until past the cap.
func partial(n uint64) result { return result{kind: stringResult, n: n, partial: true} }

func strLen(args []ref.Val, i int) uint64 {
	if i < len(args) {
		if s, ok := args[i].(types.String); ok {
			return uint64(len(s))
		}
	}
	return 0
}

func listLen(v ref.Val) (uint64, bool) {
	l, ok := v.(traits.Lister)
	if !ok {
		return 0, false
	}
	n, ok := l.Size().(types.Int)
	return uint64(max(n, 0)), ok
}

func intArg(args []ref.Val, i int) (int64, bool) {
	if i < len(args) {
		if n, ok := args[i].(types.Int); ok {
			return int64(n), true
		}
	}
	return 0, false
}

func sizeAdd(args []ref.Val) result {
	switch a := args[0].(type) {
	case types.String:
		if b, ok := args[1].(types.String); ok {
			return str(uint64(len(a)) + uint64(len(b)))
		}
	case types.Bytes:
		if b, ok := args[1].(types.Bytes); ok {
			return result{kind: bytesResult, n: uint64(len(a)) + uint64(len(b))}
		}
	case traits.Lister:
		na, _ := listLen(a)
		nb, ok := listLen(args[1])
		if !ok {
			return result{}
		}
		r := result{kind: listResult, n: na + nb}
		if _, mutable := a.(traits.MutableLister); mutable {
			// The list a comprehension accumulates grows in place.
			r.charge = max(nb*elementBytes, 1)
		}
		return r
	}
	return result{}
}

// sizeIn charges x in list when x is a list or map, which each element
// may be compared with whole.
func sizeIn(args []ref.Val) result {
	if _, ok := args[1].(traits.Lister); ok && aggregate(args[0]) {
		return result{kind: compareResult, compared: args[1], times: 1}
	}
	return result{}
}

// sizeDistinct charges distinct, which compares each element with those
// kept before it.
func sizeDistinct(args []ref.Val) result {
	if n, ok := listLen(args[0]); ok && n > 1 {
		return result{kind: compareResult, compared: args[0], times: n}
	}
	return result{}
}

func sizeReplace(args []ref.Val) result {
	s, ok0 := args[0].(types.String)
	old, ok1 := args[1].(types.String)
	repl, ok2 := args[2].(types.String)
	if !ok0 || !ok1 || !ok2 {
		return result{}
	}
	var count uint64
	if old == "" {
		count = uint64(utf8.RuneCountInString(string(s))) + 1
	} else {
		count = uint64(strings.Count(string(s), string(old)))
	}
	if n, ok := intArg(args, 3); ok && n >= 0 {
		count = min(count, uint64(n))
	}
	if len(repl) <= len(old) {
		return str(uint64(len(s)))
	}
	return str(uint64(len(s)) + count*uint64(len(repl)-len(old)))
}

func sizeJoin(args []ref.Val) result {
	l, ok := args[0].(traits.Lister)
	if !ok {
		return result{}
	}
	n, _ := listLen(l)
	total := strLen(args, 1) * n
	for it := l.Iterator(); it.HasNext() == types.True; {
		if s, ok := it.Next().(types.String); ok {
			total += uint64(len(s))
		}
	}
	return str(total)
}

// sizeFormat bounds s.format(args): the text, and for each argument twice
// what it renders to (%x writes two digits a byte) and room for a number
// written with the largest precision cel-go allows (100 digits after the
// point of a double up to 1e308).
func sizeFormat(args []ref.Val) result {
	l, ok := args[1].(traits.Lister)
	if !ok {
		return result{}
	}
	total := strLen(args, 0)
	for it := l.Iterator(); it.HasNext() == types.True && total <= MaxStringBytes; {
		total += 2*rendered(it.Next(), plainStyle, 0, MaxStringBytes+1) + 512
	}
	return partial(total)
}

func sizeSplit(args []ref.Val) result {
	s, ok0 := args[0].(types.String)
	sep, ok1 := args[1].(types.String)
	if !ok0 || !ok1 {
		return result{}
	}
	var count uint64
	if sep == "" {
		count = uint64(utf8.RuneCountInString(string(s)))
	} else {
		count = uint64(strings.Count(string(s), string(sep))) + 1
	}
	if n, ok := intArg(args, 2); ok && n >= 0 {
		count = min(count, uint64(n))
	}
	return result{kind: listResult, n: count}
}

// sizeQuote bounds strings.quote, which escapes a character in two bytes
// and turns a byte of invalid UTF-8 into a replacement character of three.
func sizeQuote(args []ref.Val) result {
	s, ok := args[0].(types.String)
	if !ok {
		return result{}
	}
	if utf8.ValidString(string(s)) {
		return str(2*uint64(len(s)) + 2)
	}
	return str(3*uint64(len(s)) + 2)
}

func sizeBase64(args []ref.Val) result {
	if b, ok := args[0].(types.Bytes); ok {
		return str((uint64(len(b)) + 2) / 3 * 4)
	}
	return result{}
}

// sizeASCIICase bounds lowerAscii and upperAscii, which turn each byte of
// invalid UTF-8 into a replacement character of three bytes.
func sizeASCIICase(args []ref.Val) result {
	s, ok := args[0].(types.String)
	if !ok {
		return result{}
	}
	if utf8.ValidString(string(s)) {
		return str(uint64(len(s)))
	}
	return str(3 * uint64(len(s)))
}

func sizeReverse(args []ref.Val) result {
	if _, ok := args[0].(types.String); ok {
		return sizeASCIICase(args)
	}
	if n, ok := listLen(args[0]); ok {
		return result{kind: listResult, n: n}
	}
	return result{}
}

func sizeRange(args []ref.Val) result {
	n, ok := intArg(args, 0)
	if !ok {
		return result{}
	}
	return result{kind: listResult, n: uint64(max(n, 0))}
}

// sizeFlatten counts the elements flatten(depth) yields, stopping past the
// cap.
func sizeFlatten(args []ref.Val) result {
	depth := int64(1)
	if n, ok := intArg(args, 1); ok {
		depth = n
	}
	l, ok := args[0].(traits.Lister)
	if !ok || depth < 0 {
		return result{}
	}
	return result{kind: listResult, n: leaves(l, depth, MaxListElements+1), partial: true}
}

func leaves(l traits.Lister, depth int64, limit uint64) uint64 {
	var n uint64
	for it := l.Iterator(); it.HasNext() == types.True && n < limit; {
		if inner, ok := it.Next().(traits.Lister); ok && depth > 0 {
			n += leaves(inner, depth-1, limit-n)
		} else {
			n++
		}
	}
	return n
}

// style is how rendered writes a value: as format's %s, as JSON or as YAML.
type style int

const (
	plainStyle style = iota
	jsonStyle
	yamlStyle
)

// rendered bounds the length of v written in a style, at a nesting depth,
// stopping once past limit. It reads a value without building anything.
func rendered(v ref.Val, st style, depth int, limit uint64) uint64 {
	// Room for the indentation YAML puts before a line at this depth.
	indent := uint64(0)
	if st == yamlStyle {
		indent = 4*uint64(depth) + 4
	}
	switch v := v.(type) {
	case types.String:
		return quoted(string(v), st, indent)
	case types.Bytes:
		// Base64 in JSON and YAML, the bytes themselves as %s.
		return (uint64(len(v))+2)/3*4 + 2 + indent
	case types.Double:
		// strconv.AppendFloat(f, 'f', -1, 64) writes up to 309 digits.
		return 330 + indent
	case traits.Lister:
		n := 2 + indent
		for it := v.Iterator(); it.HasNext() == types.True && n <= limit; {
			n += rendered(it.Next(), st, depth+1, limit-n) + 4 + indent
		}
		return n
	case traits.Mapper:
		n := 2 + indent
		for it := v.Iterator(); it.HasNext() == types.True && n <= limit; {
			k := it.Next()
			n += rendered(k, st, depth+1, limit-n) + 4 + indent
			if n <= limit {
				n += rendered(v.Get(k), st, depth+1, limit-n)
			}
		}
		return n
	case *types.Optional:
		if v.HasValue() {
			return rendered(v.GetValue(), st, depth, limit)
		}
	}
	// Numbers, bools, null, timestamps, durations, types.
	return 64 + indent
}

// quoted bounds a string as a style writes it: as it is for %s; in JSON
// with up to six bytes for a byte it escapes; in YAML with up to four bytes
// a byte and the indentation of each line of a block.
func quoted(s string, st style, indent uint64) uint64 {
	switch st {
	case jsonStyle:
		n := uint64(2)
		for i := 0; i < len(s); {
			r, w := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && w == 1, r < 0x20, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
				n += 6
			case r == '"', r == '\\':
				n += 2
			default:
				n += uint64(w)
			}
			i += w
		}
		return n
	case yamlStyle:
		return 4*uint64(len(s)) + uint64(strings.Count(s, "\n")+1)*(indent+1) + 8
	}
	return uint64(len(s))
}

// size writes a number of bytes for people.
func size(n uint64) string {
	const unit = 1 << 10
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f := float64(n) / unit
	i := 0
	for f >= unit && i < len(units)-1 {
		f /= unit
		i++
	}
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f %s", f, units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
