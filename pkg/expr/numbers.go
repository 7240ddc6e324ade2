package expr

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/decls"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// CEL keeps int and double apart: 2 is an int, a JSON number a double, and
// cel-go has no overload for a double times an int, so input.amount * 2
// fails when it runs. The rules here make numbers mix as people expect:
//
//   - every number in the variables is a double, as JSON gives it, whatever
//     its Go type (jsonAdapter);
//   - the checker accepts arithmetic on an int (or uint) and a double, and
//     % on doubles, declared in numberOverloads with no implementation: the
//     mixed arithmetic is typed dyn, like a JSON number, so that
//     input.amount * 1.5 == 3 checks as input.amount * 2 == 3 does;
//   - after checking, numberRules rewrites the checked tree so that no such
//     call reaches the evaluator: in + - * / an int or uint operand next
//     to a double or dyn one becomes a double (a literal 2 becomes 2.0), and
//     a dyn operand goes through toNumber, which turns a run-time int into a
//     double; % works on whole numbers, so next to a double or dyn operand
//     every operand goes through toWhole; and a dyn argument of a function
//     that takes an int there and no double (substring, lists.range, ...)
//     goes through toWhole too, one that takes a double and no int through
//     toNumber.
//
// cel-go's operators cannot be given more overloads that run: each has
// one implementation for all of its overloads, which dispatches on the
// left operand (types.Double's Add takes only a double). Rewriting the tree
// keeps cel-go's operators, costs and messages. Every rewritten call keeps
// the type the checker gave it, so the tree checks again as it did.

// toNumber and toWhole are the functions the rewrite inserts. Their names
// cannot be written in CEL, so only the rewrite calls them.
const (
	toNumber = "@number"
	toWhole  = "@whole"
)

// numberOverloads declares the mixed arithmetic for the checker and the
// two conversion functions.
func numberOverloads() []cel.EnvOption {
	var opts []cel.EnvOption
	mixed := [][2]*cel.Type{
		{cel.IntType, cel.DoubleType}, {cel.DoubleType, cel.IntType},
		{cel.UintType, cel.DoubleType}, {cel.DoubleType, cel.UintType},
	}
	for _, op := range []string{operators.Add, operators.Subtract, operators.Multiply, operators.Divide} {
		var overloads []cel.FunctionOpt
		for _, args := range mixed {
			overloads = append(overloads, cel.Overload(overloadID(op, args), args[:], cel.DynType))
		}
		opts = append(opts, cel.Function(op, overloads...))
	}
	var modulo []cel.FunctionOpt
	for _, args := range [][2]*cel.Type{{cel.DoubleType, cel.DoubleType}, {cel.DoubleType, cel.IntType}, {cel.IntType, cel.DoubleType}} {
		modulo = append(modulo, cel.Overload(overloadID(operators.Modulo, args), args[:], cel.IntType))
	}
	return append(opts,
		cel.Function(operators.Modulo, modulo...),
		cel.Function(toNumber, cel.Overload("expr_to_number", []*cel.Type{cel.DynType}, cel.DynType,
			cel.UnaryBinding(numberOf))),
		cel.Function(toWhole, cel.Overload("expr_to_whole", []*cel.Type{cel.DynType}, cel.DynType,
			cel.UnaryBinding(wholeOf))),
	)
}

func overloadID(op string, args [2]*cel.Type) string {
	return "expr_" + op + "_" + args[0].String() + "_" + args[1].String()
}

// numberOf turns an int or uint into a double and leaves any other value,
// so that a string still meets the operator's own "no such overload".
func numberOf(v ref.Val) ref.Val {
	switch n := v.(type) {
	case types.Int:
		return types.Double(n)
	case types.Uint:
		return types.Double(n)
	}
	return v
}

// wholeOf turns a double that is a whole number, or a uint, into an int and
// leaves any other value; a fraction is an error.
func wholeOf(v ref.Val) ref.Val {
	switch n := v.(type) {
	case types.Double:
		i, ok := whole(float64(n))
		if !ok {
			return types.NewErr("%v is not a whole number", float64(n))
		}
		return types.Int(i)
	case types.Uint:
		if n > math.MaxInt64 {
			return types.NewErr("%d is too large for an int", uint64(n))
		}
		return types.Int(n)
	}
	return v
}

// whole is f as an int, if it is a whole number an int holds.
func whole(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// numberRules is the rewrite described above, run by cel-go's static
// optimizer on a checked tree; the optimizer checks the result again.
type numberRules struct {
	overloads map[string]*decls.OverloadDecl // by id
}

func newNumberRules(env *cel.Env) *numberRules {
	r := &numberRules{overloads: map[string]*decls.OverloadDecl{}}
	for _, fn := range env.Functions() {
		for _, o := range fn.OverloadDecls() {
			r.overloads[o.ID()] = o
		}
	}
	return r
}

// change is what the rewrite does to one operand of a call.
type change int

const (
	keep      change = iota
	asDouble         // an int or uint made a double
	viaNumber        // through toNumber
	viaWhole         // through toWhole, or a whole double literal made an int
)

// rewrite is what the rewrite does to one call: a change for each operand
// (the target of a member call first), and a conversion of the call's
// result that keeps the type the checker gave it, or "".
type rewrite struct {
	changes []change
	retype  string
}

// plan says how to rewrite call, or nil to keep it.
func (r *numberRules) plan(a *ast.AST, call ast.Expr) *rewrite {
	c := call.AsCall()
	operands := c.Args()
	if c.IsMemberFunction() {
		operands = append([]ast.Expr{c.Target()}, operands...)
	}
	var rw *rewrite
	switch c.FunctionName() {
	case operators.Add, operators.Subtract, operators.Multiply, operators.Divide:
		rw = arithmetic(a, operands)
	case operators.Modulo:
		rw = modulo(a, call, operands)
	default:
		rw = r.arguments(a, call, operands)
	}
	if rw == nil || !slices.ContainsFunc(rw.changes, func(ch change) bool { return ch != keep }) {
		return nil
	}
	return rw
}

// applies says whether the rewrite changes anything in a, so that a tree
// without mixed numbers skips the optimizer and its second check.
func (r *numberRules) applies(a *ast.AST) bool {
	found := false
	ast.PostOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		found = found || e.Kind() == ast.CallKind && r.plan(a, e) != nil
	}))
	return found
}

func (r *numberRules) Optimize(ctx *cel.OptimizerContext, a *ast.AST) *ast.AST {
	var calls []ast.Expr
	ast.PostOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() == ast.CallKind {
			calls = append(calls, e)
		}
	}))
	// Plans first, while every call still has the type the checker gave it.
	plans := make([]*rewrite, len(calls))
	for i, call := range calls {
		plans[i] = r.plan(a, call)
	}
	for i, call := range calls {
		rw := plans[i]
		if rw == nil {
			continue
		}
		c := call.AsCall()
		operands := c.Args()
		if c.IsMemberFunction() {
			operands = append([]ast.Expr{c.Target()}, operands...)
		}
		operands = slices.Clone(operands)
		for j, ch := range rw.changes {
			operands[j] = applyChange(ctx, ch, operands[j])
		}
		var repl ast.Expr
		if c.IsMemberFunction() {
			repl = ctx.NewMemberCall(c.FunctionName(), operands[0], operands[1:]...)
		} else {
			repl = ctx.NewCall(c.FunctionName(), operands...)
		}
		if rw.retype != "" {
			repl = ctx.NewCall(rw.retype, repl)
		}
		ctx.UpdateExpr(call, repl)
	}
	return a
}

func applyChange(ctx *cel.OptimizerContext, ch change, e ast.Expr) ast.Expr {
	switch ch {
	case asDouble:
		if e.Kind() == ast.LiteralKind {
			switch v := e.AsLiteral().(type) {
			case types.Int:
				return ctx.NewLiteral(types.Double(v))
			case types.Uint:
				return ctx.NewLiteral(types.Double(v))
			}
		}
		return ctx.NewCall("double", e)
	case viaNumber:
		return ctx.NewCall(toNumber, e)
	case viaWhole:
		if lit, ok := doubleLiteral(e); ok {
			if n, ok := whole(lit); ok {
				return ctx.NewLiteral(types.Int(n))
			}
		}
		return ctx.NewCall(toWhole, e)
	}
	return e
}

// arithmetic plans + - * /: an int or uint next to a double or dyn becomes a
// double, a dyn next to a number goes through toNumber.
func arithmetic(a *ast.AST, operands []ast.Expr) *rewrite {
	k0, k1 := kind(a, operands[0]), kind(a, operands[1])
	if !isNumeric(k0) || !isNumeric(k1) {
		return nil
	}
	dyn := k0 == types.DynKind || k1 == types.DynKind
	if !dyn && (k0 == types.DoubleKind) == (k1 == types.DoubleKind) {
		return nil
	}
	rw := &rewrite{}
	for _, k := range []types.Kind{k0, k1} {
		switch k {
		case types.IntKind, types.UintKind:
			rw.changes = append(rw.changes, asDouble)
		case types.DynKind:
			rw.changes = append(rw.changes, viaNumber)
		default:
			rw.changes = append(rw.changes, keep)
		}
	}
	if !dyn {
		// Two doubles now, where the checker saw an int and a double and
		// typed the call dyn.
		rw.retype = "dyn"
	}
	return rw
}

// modulo plans %: next to a double or dyn operand, every operand becomes an
// int. A fraction fails where it is met, or when the expression is
// compiled if it is a literal (fractionModulo).
func modulo(a *ast.AST, call ast.Expr, operands []ast.Expr) *rewrite {
	k0, k1 := kind(a, operands[0]), kind(a, operands[1])
	if k0 != types.DoubleKind && k0 != types.DynKind && k1 != types.DoubleKind && k1 != types.DynKind {
		return nil
	}
	rw := &rewrite{}
	for _, k := range []types.Kind{k0, k1} {
		if k == types.IntKind {
			rw.changes = append(rw.changes, keep)
		} else {
			rw.changes = append(rw.changes, viaWhole)
		}
	}
	if kind(a, call) == types.UintKind {
		// A uint and a dyn, whose remainder is an int now.
		rw.retype = "uint"
	}
	return rw
}

// fractionModulo finds an operand of % that is a literal fraction, such as
// 7.5 in 7.5 % 2, which can only fail.
func fractionModulo(a *ast.AST) (id int64, lit float64, found bool) {
	ast.PostOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if found || e.Kind() != ast.CallKind || e.AsCall().FunctionName() != operators.Modulo {
			return
		}
		for _, arg := range e.AsCall().Args() {
			if f, ok := doubleLiteral(arg); ok {
				if _, ok := whole(f); !ok {
					id, lit, found = arg.ID(), f, true
					return
				}
			}
		}
	}))
	return id, lit, found
}

// arguments plans the dyn arguments of any other call: through toWhole
// where every overload the checker found takes an int there and none a
// double, through toNumber where they take a double and neither an int
// nor a uint.
func (r *numberRules) arguments(a *ast.AST, call ast.Expr, operands []ast.Expr) *rewrite {
	ids := a.GetOverloadIDs(call.ID())
	if len(ids) == 0 {
		return nil
	}
	rw := &rewrite{changes: make([]change, len(operands))}
	for i, arg := range operands {
		if kind(a, arg) != types.DynKind {
			continue
		}
		takes := map[types.Kind]bool{}
		for _, oid := range ids {
			o, ok := r.overloads[oid]
			if !ok || i >= len(o.ArgTypes()) {
				takes[types.DynKind] = true
				continue
			}
			takes[o.ArgTypes()[i].Kind()] = true
		}
		switch {
		case takes[types.DynKind] || takes[types.AnyKind] || takes[types.TypeParamKind]:
		case takes[types.IntKind] && !takes[types.DoubleKind]:
			rw.changes[i] = viaWhole
		case takes[types.DoubleKind] && !takes[types.IntKind] && !takes[types.UintKind]:
			rw.changes[i] = viaNumber
		}
	}
	return rw
}

// kind is the checked type of e, with type parameters and any as dyn.
func kind(a *ast.AST, e ast.Expr) types.Kind {
	switch k := a.GetType(e.ID()).Kind(); k {
	case types.AnyKind, types.TypeParamKind:
		return types.DynKind
	default:
		return k
	}
}

func isNumeric(k types.Kind) bool {
	return k == types.IntKind || k == types.UintKind || k == types.DoubleKind || k == types.DynKind
}

func doubleLiteral(e ast.Expr) (float64, bool) {
	if e.Kind() != ast.LiteralKind {
		return 0, false
	}
	d, ok := e.AsLiteral().(types.Double)
	return float64(d), ok
}

// jsonAdapter hands the variables to CEL as JSON would: every number a
// double, whatever its Go type. Maps and lists are converted as they are
// read, so an expression pays only for what it reads.
type jsonAdapter struct{}

func (a jsonAdapter) NativeToValue(v any) ref.Val {
	switch v := v.(type) {
	case nil:
		return types.NullValue
	case ref.Val:
		return v
	case float64:
		return types.Double(v)
	case map[string]any:
		return types.NewStringInterfaceMap(a, v)
	case []any:
		return types.NewDynamicList(a, v)
	case int:
		return types.Double(v)
	case int64:
		return types.Double(v)
	case int32:
		return types.Double(v)
	case int16:
		return types.Double(v)
	case int8:
		return types.Double(v)
	case uint:
		return types.Double(v)
	case uint64:
		return types.Double(v)
	case uint32:
		return types.Double(v)
	case uint16:
		return types.Double(v)
	case uint8:
		return types.Double(v)
	case float32:
		return types.Double(v)
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return types.NewErr("%q is not a number", string(v))
		}
		return types.Double(f)
	case []byte:
		return types.DefaultTypeAdapter.NativeToValue(v)
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Slice, reflect.Array:
		// cel-go reads the elements of a typed slice, such as []int,
		// without the adapter; as []any they come through it.
		items := make([]any, rv.Len())
		for i := range items {
			items[i] = rv.Index(i).Interface()
		}
		return types.NewDynamicList(a, items)
	case reflect.Map:
		return types.NewDynamicMap(a, v)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}
