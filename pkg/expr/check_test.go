package expr

import (
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/parser"
)

// celEnv is cel-go configured as NewEnv configured it before expr had an
// evaluator of its own; it is the oracle the checker must agree with.
func celEnv(t testing.TB) *cel.Env {
	t.Helper()
	env, err := cel.NewEnv(
		cel.Variable("input", cel.DynType),
		cel.Variable("steps", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("execution", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		cel.DefaultUTCTimeZone(true),
		cel.OptionalTypes(),
		cel.ParserExpressionSizeLimit(DefaultMaxLength),
		cel.ParserRecursionLimit(DefaultMaxNesting),
		ext.Strings(),
		ext.Math(),
		ext.Encoders(),
		ext.Lists(),
		ext.Bindings(),
	)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// tree parses src into a syntax tree. It uses cel-go's parser with macros
// left unexpanded, and turns macro calls into macro nodes.
func tree(t testing.TB, src string) exprNode {
	t.Helper()
	p, err := parser.NewParser(parser.EnableOptionalSyntax(true))
	if err != nil {
		t.Fatal(err)
	}
	a, errs := p.Parse(common.NewTextSource(src))
	if len(errs.GetErrors()) > 0 {
		t.Fatalf("parse %q: %s", src, errs.ToDisplayString())
	}
	info := a.SourceInfo()
	pos := func(e celast.Expr) int {
		r, _ := info.GetOffsetRange(e.ID())
		return runeOffset(src, int(r.Start))
	}
	var conv func(e celast.Expr) exprNode
	convAll := func(es []celast.Expr) []exprNode {
		var out []exprNode
		for _, e := range es {
			out = append(out, conv(e))
		}
		return out
	}
	conv = func(e celast.Expr) exprNode {
		switch e.Kind() {
		case celast.LiteralKind:
			var v any
			switch l := e.AsLiteral().(type) {
			case types.Bool:
				v = bool(l)
			case types.Int:
				v = int64(l)
			case types.Uint:
				v = uint64(l)
			case types.Double:
				v = float64(l)
			case types.String:
				v = string(l)
			case types.Bytes:
				v = []byte(l)
			}
			return &literal{Offset: pos(e), Value: v}
		case celast.IdentKind:
			return &ident{Offset: pos(e), Name: e.AsIdent()}
		case celast.SelectKind:
			s := e.AsSelect()
			return &selectExpr{Offset: pos(e), Operand: conv(s.Operand()), Field: s.FieldName()}
		case celast.ListKind:
			l := e.AsList()
			n := &listExpr{Offset: pos(e), Elems: convAll(l.Elements()), Optional: make([]bool, l.Size())}
			for _, i := range l.OptionalIndices() {
				n.Optional[i] = true
			}
			return n
		case celast.MapKind:
			n := &mapExpr{Offset: pos(e)}
			for _, en := range e.AsMap().Entries() {
				me := en.AsMapEntry()
				n.Entries = append(n.Entries, mapEntry{Key: conv(me.Key()), Value: conv(me.Value()), Optional: me.IsOptional()})
			}
			return n
		}
		c := e.AsCall()
		args := c.Args()
		if c.FunctionName() == "_?._" {
			return &selectExpr{Offset: pos(e), Operand: conv(args[0]), Field: string(args[1].AsLiteral().(types.String)), Optional: true}
		}
		if !c.IsMemberFunction() {
			if c.FunctionName() == "has" && len(args) == 1 && args[0].Kind() == celast.SelectKind {
				s := args[0].AsSelect()
				return &selectExpr{Offset: pos(args[0]), Operand: conv(s.Operand()), Field: s.FieldName(), Test: true}
			}
			return &call{Offset: pos(e), Func: c.FunctionName(), Args: convAll(args)}
		}
		kinds := map[string]macroKind{"all": macroAll, "exists": macroExists, "exists_one": macroExistsOne,
			"map": macroMap, "filter": macroFilter, "optMap": macroOptMap, "optFlatMap": macroOptFlatMap}
		target := c.Target()
		if k, ok := kinds[c.FunctionName()]; ok && (len(args) == 2 || len(args) == 3 && k == macroMap) && args[0].Kind() == celast.IdentKind {
			m := &macro{Offset: pos(e), Kind: k, Range: conv(target), Var: args[0].AsIdent(), Body: conv(args[len(args)-1])}
			if len(args) == 3 {
				m.Filter = conv(args[1])
			}
			return m
		}
		if c.FunctionName() == "bind" && len(args) == 3 && target.Kind() == celast.IdentKind && target.AsIdent() == "cel" && args[0].Kind() == celast.IdentKind {
			return &macro{Offset: pos(e), Kind: macroBind, Range: conv(args[1]), Var: args[0].AsIdent(), Body: conv(args[2])}
		}
		return &call{Offset: pos(e), Func: c.FunctionName(), Target: conv(target), Args: convAll(args)}
	}
	return conv(a.Expr())
}

func TestCheckTypes(t *testing.T) {
	tests := []struct{ src, want string }{
		{"1", "int"},
		{"1u", "uint"},
		{"1.5", "double"},
		{"'a'", "string"},
		{"b'a'", "bytes"},
		{"null", "null_type"},
		{"true", "bool"},
		{"input", "dyn"},
		{"input.amount > 1000", "bool"},
		{"steps", "map(string, dyn)"},
		{"steps.lookup.output", "dyn"},
		{"[1, 2]", "list(int)"},
		{"[1, 'a']", "list(dyn)"},
		{"[]", "list(dyn)"},
		{"{}", "map(dyn, dyn)"},
		{"{'a': 1, 'b': input}", "map(string, dyn)"},
		{"[input, 1]", "list(dyn)"},
		{"[1, null]", "list(dyn)"},
		{"[[1], []]", "list(list(int))"},
		{"int", "type(int)"},
		{"type(1)", "type(int)"},
		{"list", "type(list(dyn))"},
		{"google.protobuf.Timestamp", "type(google.protobuf.Timestamp)"},
		{"timestamp('2024-01-01T00:00:00Z')", "google.protobuf.Timestamp"},
		{"duration('1h') + duration('1m')", "google.protobuf.Duration"},
		{"1 < 2.0 && 1u <= 3", "bool"},
		{"[1, 2][0]", "int"},
		{"{'a': 1}['a']", "int"},
		{"{'a': 1}.a", "int"},
		{"{'a': 1}.?a", "optional_type(int)"},
		{"[1][?0]", "optional_type(int)"},
		{"optional.of(1)", "optional_type(int)"},
		{"optional.none()", "optional_type(dyn)"},
		{"optional.of(1).orValue(2)", "int"},
		{"[?optional.of(1), 2]", "list(int)"},
		{"{?'a': optional.of('x')}", "map(string, string)"},
		{"true ? 1 : 2", "int"},
		{"[1, 2].map(x, x * 2)", "list(int)"},
		{"[1, 2].map(x, x > 1, string(x))", "list(string)"},
		{"{'a': 1}.filter(k, k == 'a')", "list(string)"},
		{"[1, 2].all(x, x > 0)", "bool"},
		{"input.items.exists_one(i, i.qty > 1)", "bool"},
		{"cel.bind(x, 2, x * x)", "int"},
		{"optional.of(2).optMap(x, double(x) * 1.5)", "optional_type(double)"},
		{"optional.of(2).optFlatMap(x, optional.of(string(x)))", "optional_type(string)"},
		{"has(input.x)", "bool"},
		{"math.greatest(1, 2)", "int"},
		{"math.least(1, 2.0)", "dyn"},
		{"math.greatest(1, 2, 3)", "int"},
		{"math.greatest([1.0, 2.0])", "double"},
		{"math.greatest(1, 'a'.size())", "int"},
		{"[3, 1].sortBy(x, -x)", "list(int)"},
		{"base64.encode(b'a')", "string"},
		{"'a,b'.split(',')", "list(string)"},
		{"lists.range(3)", "list(int)"},
		{"json.parse('1', int)", "optional_type(int)"},
		{"dyn(1)", "dyn"},
		{"input.a == input.b", "bool"},
		{"size(input)", "int"},
		{"input + 1", "int"},
		{"[1].map(x, [x]).flatten()", "list(int)"},
	}
	for _, tt := range tests {
		got, err := check(tree(t, tt.src), tt.src)
		if err != nil {
			t.Errorf("check(%q): %v", tt.src, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("check(%q) = %s, want %s", tt.src, got, tt.want)
		}
	}
}

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		src          string
		line, column int
		msg          string
	}{
		{"inpt.amount > 1000", 1, 1, "undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
		{"input.amount > 1000 &&\n  inpt.ok", 2, 3, "undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
		{"'x' + 1", 1, 5, "found no matching overload for '_+_' applied to '(string, int)'"},
		{"'né' + inpt", 1, 8, "undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
		{"sise('a')", 1, 5, "undeclared reference to 'sise' (did you mean 'size'?)"},
		{"'a'.startWith('a')", 1, 14, "undeclared reference to 'startWith' (did you mean 'startsWith'?)"},
		{"exist", 1, 1, "undeclared reference to 'exist' (did you mean 'exists'?)"},
		{"xyzzy", 1, 1, "undeclared reference to 'xyzzy'"},
		{"math.gretest(1, 2)", 1, 1, "undeclared reference to 'math'"},
		{"optional.none", 1, 9, "undeclared reference to 'optional.none'"},
		{"'a'.size(1)", 1, 9, "found no matching overload for 'size' applied to 'string.(int)'"},
		{"size()", 1, 5, "found no matching overload for 'size' applied to '()'"},
		{"timestamp(1.5)", 1, 10, "found no matching overload for 'timestamp' applied to '(double)'"},
		{"duration('1h') + timestamp(0) + 1", 1, 31, "found no matching overload for '_+_' applied to '(timestamp, int)'"},
		{"[1][?'a']", 1, 4, "found no matching overload for '_[?_]' applied to '(list(int), string)'"},
		{"1 ? 2 : 3", 1, 3, "found no matching overload for '_?_:_' applied to '(int, int, int)'"},
		{"1 && true", 1, 1, "expected type 'bool' but found 'int'"},
		{"1.all(x, x)", 1, 1, "expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)"},
		{"[1].all(x, x)", 1, 12, "expected type 'bool' but found 'int'"},
		{"[1].filter(x, 'a')", 1, 11, "found no matching overload for '_?_:_' applied to '(string, list(int), list(int))'"},
		{"[1].exists_one(x, 1)", 1, 15, "found no matching overload for '_?_:_' applied to '(int, int, int)'"},
		{"[1].map(x, 1, x)", 1, 8, "found no matching overload for '_?_:_' applied to '(int, list(int), list(int))'"},
		{"[1].map(x, y)", 1, 12, "undeclared reference to 'y'"},
		{"optional_type(1)", 1, 14, "undeclared reference to 'optional_type'"},
		{"1.f", 1, 2, "type 'int' does not support field selection"},
		{"has(1.f)", 1, 6, "type 'int' does not support field selection"},
		{"[?1]", 1, 3, "expected type 'optional_type(int)' but found 'int'"},
		{"math.greatest()", 1, 1, "math.greatest() requires at least one argument"},
		{"math.least('a')", 1, 12, "math.least() invalid single argument value"},
		{"math.greatest(1, 'a')", 1, 18, "math.greatest() simple literal arguments must be numeric"},
		{"1.sortBy(x, x)", 1, 1, "sortBy can only be applied to a list, identifier, comprehension, call or select expression"},
		{"[1].sortBy(1, 2)", 1, 12, "argument is not an identifier"},
		{"[[1]].sortBy(x, x)", 1, 13, "found no matching overload for 'sortBy' applied to 'list(list(int)).(list(list(int)))'"},
		{"optional.of(1).optFlatMap(x, x)", 1, 26, "found no matching overload for '_?_:_' applied to '(bool, int, optional_type(dyn))'"},
		{"1.optMap(x, x)", 1, 9, "found no matching overload for 'hasValue' applied to 'int.()'"},
	}
	for _, tt := range tests {
		_, err := check(tree(t, tt.src), tt.src)
		if err == nil {
			t.Errorf("check(%q) succeeded, want error %q", tt.src, tt.msg)
			continue
		}
		if err.Line != tt.line || err.Column != tt.column || err.Message != tt.msg {
			t.Errorf("check(%q) error at %d:%d %q, want %d:%d %q", tt.src, err.Line, err.Column, err.Message, tt.line, tt.column, tt.msg)
		}
	}
}
