package expr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	celparser "cel.dev/cel-go/parser"
)

// celTree parses src with CEL's reference parser, macros off, and turns its
// tree into ours as parse and check would leave it: macros as macro nodes,
// has() as a test select, namespaced calls as global calls.
func celTree(t testing.TB, src string) exprNode {
	t.Helper()
	p, err := celparser.NewParser(celparser.Macros(), celparser.EnableOptionalSyntax(true))
	if err != nil {
		t.Fatal(err)
	}
	tree, errs := p.Parse(common.NewTextSource(src))
	if len(errs.GetErrors()) > 0 {
		t.Fatalf("parse %q: %v", src, errs.ToDisplayString())
	}
	return fromCEL(tree.Expr())
}

var celMacros = map[string]macroKind{
	"all": macroAll, "exists": macroExists, "exists_one": macroExistsOne,
	"map": macroMap, "filter": macroFilter, "optMap": macroOptMap, "optFlatMap": macroOptFlatMap,
	"sortBy": macroSortBy,
}

var celNamespaces = map[string]bool{"math": true, "base64": true, "lists": true, "strings": true, "optional": true, "json": true, "yaml": true}

func fromCEL(e ast.Expr) exprNode {
	switch e.Kind() {
	case ast.LiteralKind:
		v := e.AsLiteral().Value()
		if _, ok := v.(int64); !ok && reflect.TypeOf(v) != nil && reflect.TypeOf(v).Kind() == reflect.Int32 {
			v = nil // the protobuf null value
		}
		return &literal{Value: v}
	case ast.IdentKind:
		return &ident{Name: e.AsIdent()}
	case ast.SelectKind:
		s := e.AsSelect()
		return &selectExpr{Operand: fromCEL(s.Operand()), Field: s.FieldName(), Test: s.IsTestOnly()}
	case ast.ListKind:
		l := e.AsList()
		n := &listExpr{Optional: make([]bool, len(l.Elements()))}
		for _, el := range l.Elements() {
			n.Elems = append(n.Elems, fromCEL(el))
		}
		for _, i := range l.OptionalIndices() {
			n.Optional[i] = true
		}
		return n
	case ast.MapKind:
		n := &mapExpr{}
		for _, en := range e.AsMap().Entries() {
			m := en.AsMapEntry()
			n.Entries = append(n.Entries, mapEntry{Key: fromCEL(m.Key()), Value: fromCEL(m.Value()), Optional: m.IsOptional()})
		}
		return n
	case ast.CallKind:
		c := e.AsCall()
		args := c.Args()
		name := c.FunctionName()
		switch {
		case name == "has" && !c.IsMemberFunction():
			s := fromCEL(args[0]).(*selectExpr)
			s.Test = true
			return s
		case name == "_?._":
			return &selectExpr{Operand: fromCEL(args[0]), Field: args[1].AsLiteral().Value().(string), Optional: true}
		case c.IsMemberFunction() && name == "bind" && c.Target().Kind() == ast.IdentKind && c.Target().AsIdent() == "cel":
			return &macro{Kind: macroBind, Var: args[0].AsIdent(), Range: fromCEL(args[1]), Body: fromCEL(args[2])}
		case c.IsMemberFunction() && c.Target().Kind() == ast.IdentKind && celNamespaces[c.Target().AsIdent()]:
			n := &call{Func: c.Target().AsIdent() + "." + name}
			for _, a := range args {
				n.Args = append(n.Args, fromCEL(a))
			}
			return n
		}
		if k, ok := celMacros[name]; ok && c.IsMemberFunction() && len(args) >= 2 && args[0].Kind() == ast.IdentKind {
			m := &macro{Kind: k, Range: fromCEL(c.Target()), Var: args[0].AsIdent(), Body: fromCEL(args[len(args)-1])}
			if len(args) == 3 {
				m.Filter = fromCEL(args[1])
			}
			return m
		}
		n := &call{Func: name}
		if c.IsMemberFunction() {
			n.Target = fromCEL(c.Target())
		}
		for _, a := range args {
			n.Args = append(n.Args, fromCEL(a))
		}
		return n
	}
	panic("unexpected expression kind")
}

// evalTree evaluates a tree as a Program of the new evaluator will.
func evalTree(ctx context.Context, root exprNode, v Vars, limit uint64) (any, error) {
	ev := &evaluator{ctx: ctx, act: v.activation(), b: &budget{limit: limit}}
	val, err := ev.run(root)
	if err != nil {
		return nil, err
	}
	return toJSON(val)
}

// differential lists expressions that cel-go, configured as NewEnv does, and
// the evaluator must agree on: the same JSON result, or the same error.
var differential = []string{
	// Literals and arithmetic.
	"1 + 2 * 3 - 4 / 2 % 3", "7 / 2", "-7 / 2", "-7 % 3", "7u / 2u", "7u % 2u", "1.5 * 2.0",
	"9223372036854775807 + 1", "-9223372036854775808 - 1", "-(-9223372036854775808)",
	"9223372036854775807 * 2", "-9223372036854775808 / -1", "-9223372036854775808 % -1",
	"18446744073709551615u + 1u", "1u - 2u", "18446744073709551615u * 2u", "1 / 0", "1 % 0", "1u / 0u", "1u % 0u",
	"1.0 / 0.0", "-1.0 / 0.0", "0.0 / 0.0 == 0.0 / 0.0", "'a' + 'b'", "b'a' + b'b'", "[1] + [2, 'x']",
	"dyn(1) == 1.0", "dyn(1) == 1u", "dyn(1u) == 1.0", "dyn(1) != 2.5", "1 < 1.5", "2u > 1", "-1 < 1u", "1.5 >= 1",
	"'a' < 'b'", "b'a' < b'b'", "false < true", "null == null", "[1, 2] == [1.0, 2u]", "dyn([1]) == ['1']",
	"dyn({'a': 1}) == {'a': 1.0}", "{'a': 1} == {'b': 1}", "dyn({1: 'a'}) == {1u: 'a'}", "dyn(1) == 'a'", "null == dyn(1)",
	"double('NaN') < 1.0", "double('NaN') == double('NaN')", "double('NaN') != double('NaN')",
	"dyn(9007199254740993) == 9007199254740992.0", "9007199254740993 > 9007199254740992.0",
	"18446744073709551615u > 1.8446744073709552e19", "-(5)", "-(2.5)", "!true", "!!false",
	"dyn(1u) + 1", "dyn(1) - 1u", "dyn(1.5) * 2", "dyn('a') / 2", "-dyn('a')", "!dyn(1)", "dyn(1) < 'a'",
	"dyn('a') <= b'a'", "dyn(true) > 1", "size(dyn(1))", "dyn(1).size()", "dyn([1]) + 'a'", "dyn(duration('1s')) + 1",
	"dyn(execution.started_on) - 1", "dyn({}) == {}", "dyn(null) < 1", "dyn(1).startsWith('a')", "dyn(1).charAt(0)", "dyn(1).value()", "dyn(null) + 1", "-dyn(1u)",
	"int(input.note)", "bool(input.count)", "timestamp(input.amount)", "input.note.split(',')", "timestamp(input.count * -100000000000)",
	"dyn([1]).sort()", "dyn(1).getHours()", "type(dyn(1)) == uint",

	"dyn(optional.none()).value()", "dyn(1).hasValue()", "dyn(1).orValue(2)", "dyn(1).or(optional.none())",
	"dyn(1).optMap(x, x)", "math.abs(dyn('a'))", "math.greatest(dyn('a'), 1)", "math.greatest(dyn([]))", "math.least(dyn(['a']))",
	"math.ceil(dyn(1))", "math.sqrt(dyn('a'))", "math.bitAnd(dyn(1), 1u)", "math.bitShiftLeft(dyn(1u), 70)", "base64.encode(dyn('a'))",
	"lists.range(dyn(-1))", "dyn([1]).slice(-1, 0)", "dyn([1]).distinct()", "dyn('a').reverse()", "dyn(1).reverse()",
	"dyn(1).format([])", "'%s'.format(dyn(1))", "strings.quote(dyn(1))", "dyn([1, 'a']).join()",
	"timestamp('2024-03-10T12:00:00Z').getHours('America/Los_Angeles')", "timestamp('2024-11-03T09:30:00Z').getHours('America/New_York')",
	"timestamp('0001-01-01T00:00:00Z') - timestamp('9999-12-31T23:59:59Z')", "duration('-2562047h') - duration('2562047h')",
	"int(timestamp('1969-12-31T23:59:59Z'))",
	"timestamp('2024-01-01T00:00:00.123456789Z').getMilliseconds()",
	"'a' + dyn(1)", "[1] == dyn([1.0])", "dyn({'a': [1]}) == {'a': [1u]}", "{'a': 1}.exists(k, k == 'a')",

	"false && 1 / 0 == 1", "1 / 0 == 1 && false", "true || 1 / 0 == 1", "1 / 0 == 1 || true",
	"1 / 0 == 1 && true", "true && 1 / 0 == 1", "1 / 0 == 1 || 2 / 0 == 1", "input.amount && true",
	"input.amount || false", "input.amount && false", "input.note || true",
	"true ? 1 : 1 / 0", "false ? 1 / 0 : 2", "1 / 0 == 1 ? 1 : 2", "input.amount ? 1 : 2",
	// Inputs.
	"input.amount > 1000", "input.count + 1", "input.n * 2", "input.items[0].sku", "input.items[1].price",
	"input.items[-1]", "input.items[2]", "input.items[0u]", "input.items[1.0]", "input.items[0.5]",
	"input.missing", "input['currency']", "input.customer.name.missing", "input.id.size", "input.note.x",
	"steps.lookup.output.name", "steps.review.output", "execution.id", "execution.started_on",
	"execution.nothing", "has(input.customer)", "has(input.nope)", "has(steps.lookup.output.limit)",
	"has(input.id.x)", "has(input.items.x)", "input.items.x", "has(input.note.x)", "has(input.amount.x)",
	"input.items['0']", "input[1]", "input[true]", "dyn({1: 2})[1.0]", "dyn({1: 2})[1.5]", "dyn({1: 2})['1']", "[1][dyn(0.5)]", "input.items[input.note]", "input[input.note]", "input[?input.note]", "input.id[?0]", "input.id.?x", "input.?id.x", "[1][dyn('0')]",
	"{'a': {'b': 1}}.a.b", "{'a': 1}.?a.orValue(2)", "[[1]][0][?0]", "optional.of([1])[?0]", "optional.of({'a': 1}).a",
	"optional.none()[?0]", "dyn(optional.of(1))[0]", "has({'a': 1}.a)", "has(optional.of({'a': 1}).a)", "'eu' in input.tags", "'us' in input.tags", "'id' in input", "1 in {1: 2}",
	"dyn(1.0) in {1: 2}", "dyn(2u) in [1, 2]", "1 in input", "input.amount * 2", "input.amount + input.count",
	"input.count == 3", "input.count == 3.0", "type(input.count)", "type(input.n)", "type(input)",
	"type(input.items)", "type(1) == int", "type(type(1))", "type(null)", "type(b'')", "type(1u)",
	"type(duration('1s'))", "type(execution.started_on)", "type(optional.none())", "int", "dyn(1) + 1",
	// Lists and maps.
	"[1, 2, 3][1]", "[1, 2, 3][3]", "{'a': 1}['b']", "{'a': 1}.a", "{1: 'x', 2u: 'y'}[2]", "{true: 1}[true]",
	"{'a': 1, 'a': 2}", "{'b': 1, 'a': 2}", "{[1]: 2}", "{1.5: 1}", "size([1, 2])", "size({'a': 1})",
	"[1, 2].size()", "size('héllo')", "size(b'h\\xff')", "'héllo'.size()", "[[1], [2, [3]]]",
	// Macros.
	"[1, 2, 3].all(x, x > 0)", "[1, 2, 3].all(x, x > 1)", "[1, 2, 3].exists(x, x > 2)",
	"[1, 2, 3].exists(x, x > 5)", "[1, 2, 3].exists_one(x, x > 2)", "[1, 2, 3].exists_one(x, x > 1)",
	"[1, 0, 2].all(x, 4 / x > 1)", "[1, 0, 2].exists(x, 4 / x == 4)", "[0, 1].exists(x, 4 / x == 8)",
	"[1, 0].all(x, 4 / x == 9)", "[0, 1].exists_one(x, 4 / x == 4)", "[1, 2].map(x, x * 2)",
	"[1, 2, 3].map(x, x > 1, x * 10)", "[1, 2, 3].filter(x, x % 2 == 1)", "[1, 0].map(x, 1 / x)",
	"{'a': 1, 'b': 2}.map(k, k).sort()", "{'a': 1, 'b': 2}.all(k, k.size() == 1)", "input.customer.exists(k, k == 'name')",
	"[].all(x, x)", "[].exists(x, x)", "[].map(x, x)", "[1, 2].all(x, dyn(x))", "[1].exists(x, dyn('a'))", "[true, 1].all(x, x)", "[false, 1].all(x, x)", "[1, true].exists(x, x)",
	"[[1, 2], [3]].map(l, l.map(x, x + 1))", "cel.bind(x, 2, x * x)", "cel.bind(x, input.A, 0)", "cel.bind(x, 1 / 0, true || x == 1)", "cel.bind(x, 1 / 0, x == 1)",
	"cel.bind(x, [1, 2], cel.bind(y, x + x, y.size() + x.size()))", "cel.bind(x, 1, cel.bind(x, x + 1, x))", "[1, 2].map(y, cel.bind(x, y * 2, x + x))", "cel.bind(a, [1, 2], a.map(x, x + a.size()))",
	"input.items.map(i, i.qty * i.price)", "input.items.filter(i, i.price > 50).map(i, i.sku)",
	"dyn(1).all(x, true)", "[1, 2].map(x, x / 0)",
	// Optionals.
	"input.?discount", "input.?amount", "input.?discount.orValue(5)", "input.?customer.?name.orValue('x')",
	"input.?customer.name", "input.?nope.name", "optional.of(1).value()", "optional.none().value()",
	"optional.none().hasValue()", "optional.of(1).orValue(1 / 0)", "optional.of(1).or(optional.of(1 / 0))",
	"optional.none().orValue(1 / 0)", "(1 / 0 == 1 ? optional.none() : optional.none()).orValue(1)", "1 / 0 in []", "optional.of(1).hasValue()", "optional.ofNonZeroValue(0).hasValue()",
	"optional.ofNonZeroValue('a')", "optional.none().or(optional.of(2))", "optional.of(1).or(optional.of(2))",
	"[1, 2][?5]", "[1, 2][?1]", "{'a': 1}[?'a']", "{'a': 1}[?'b'].orValue(0)", "[1, ?optional.none(), ?optional.of(3)]",
	"{'a': 1, ?'b': optional.none(), ?'c': optional.of(2)}", "optional.of(2).optMap(x, x * 3)",
	"optional.none().optMap(x, x * 3)", "optional.of(2).optFlatMap(x, optional.of(x + 1))",
	"optional.unwrap([optional.of(1), optional.none()])", "[optional.of(1), optional.none()].unwrapOpt()",
	"input.items.first()", "[].last()", "[1, 2].last().value()",
	// Conversions.
	"int(2.9)", "int(-2.9)", "int(input.amount * 1e16)", "int('12')", "int(input.id)", "int(uint(input.count) * 9223372036854775807u)", "int(execution.started_on)",
	"uint(3)", "uint(input.count - 4)", "uint(2.5)", "uint('7')", "double(3)", "double('1e3')", "double(input.id)", "string(1.5)",
	"string(1e20)", "string(100.0)", "string(-0.0)", "string(3)", "string(3u)", "string(true)", "string(b'abc')", "string(bytes(input.id) + b'\\xff')",
	"string(duration('90m'))", "string(execution.started_on)", "bool('true')", "bool('T')", "bool(input.id)", "bytes('é')",
	"timestamp('2024-01-02T03:04:05Z')", "timestamp('2024-01-02T03:04:05.123+02:00')", "timestamp(input.id)", "timestamp(input.id + '2024-01-02T03:04:05Z')",
	"timestamp(0)", "timestamp(input.count * 100000000000)", "duration('1h30m')", "duration(input.id)", "duration('-1.5s')", "int(duration('1s'))",
	// Times.
	"execution.started_on + duration('1h')", "duration('1h') + execution.started_on", "execution.started_on - duration('24h')",
	"execution.started_on - timestamp('2024-01-01T00:00:00Z')", "duration('1h') + duration('30m')", "duration('1h') - duration('2h')",
	"execution.started_on.getFullYear()", "execution.started_on.getMonth()", "execution.started_on.getDate()",
	"execution.started_on.getDayOfMonth()", "execution.started_on.getDayOfWeek()", "execution.started_on.getDayOfYear()",
	"execution.started_on.getHours()", "execution.started_on.getHours('Asia/Tokyo')", "execution.started_on.getHours('-08:30')",
	"execution.started_on.getMinutes('+05:30')", "execution.started_on.getHours('Nowhere/City')", "execution.started_on.getSeconds()",
	"timestamp('2024-01-02T03:04:05.678Z').getMilliseconds()", "duration('90m').getHours()", "duration('90m').getMinutes()",
	"duration('1.5s').getSeconds()", "duration('1.5s').getMilliseconds()", "execution.started_on < timestamp('2025-01-01T00:00:00Z')",
	"duration('1s') < duration('2s')", "timestamp('9999-12-31T23:59:59Z') + duration('1s')",
	"execution.started_on.getDayOfWeek('America/New_York')",
	// Strings.
	"'hello'.contains('ell')", "'hello'.startsWith('he')", "'hello'.endsWith('lo')", "'abc'.matches('^a.c$')",
	"'abc'.matches(input.id + '(')", "matches('abc', 'b')", "'héllo'.charAt(1)", "'abc'.charAt(3)", "'abc'.charAt(4)",
	"'héllo wörld'.indexOf('o')", "'hello'.indexOf('l', 3)", "'hello'.indexOf('')", "'hello'.indexOf('', 9)",
	"'hello'.indexOf('x', -1)", "'hello'.indexOf('o', 10)", "'hello'.lastIndexOf('l')", "'hello'.lastIndexOf('l', 2)",
	"'hello'.lastIndexOf('')", "'hi'.lastIndexOf('long')", "'héllo'.lastIndexOf('é', 0)", "'MiXed ÄÖ'.lowerAscii()",
	"'MiXed äö'.upperAscii()", "'aaa'.replace('a', 'b')", "'aaa'.replace('a', 'b', 2)", "'a,b,c'.split(',')",
	"'a,b,c'.split(',', 2)", "'a,b'.split(',', 0)", "'héllo'.substring(1)", "'héllo'.substring(1, 3)", "'abc'.substring(2, 1)",
	"'abc'.substring(4)", "'abc'.substring(0, 4)", "'  x \\t'.trim()", "['a', 'b'].join()", "['a', 'b'].join('-')", "dyn('eu').join('-')",
	"'héllo'.reverse()", "strings.quote('a\"b\\n\\\\')", "'%s and %d'.format(['x', 5])", "'%.2f|%f|%e'.format([1.005, 2, 1234.5])",
	"'%b %o %x %X'.format([5, 8, 255, 255])", "'%x'.format(['hi'])", "'%s'.format([[1, 'a', 2.5, null]])",
	"'%s'.format([{'b': 1, 'a': [true]}])", "'%s %s'.format([duration('90s'), timestamp('2024-01-02T03:04:05Z')])",
	"'%d'.format(dyn(['x']))", "'%s'.format(dyn([]))", "'100%%'.format([])", "'%s'.format([b'ab'])", "'%d'.format([2.5])",
	"'%s'.format([1u])", "'%s'.format([type(1)])", "'%x'.format([-255])", "'%.0f'.format([2.5])", "'%s'.format([double('NaN')])",
	"'%b'.format([true])",
	// Math.
	"math.greatest(1, 2.5, 0u)", "math.least(3, -1)", "math.greatest([1, 5, 2])", "math.least([2.5, 1.5])",
	"math.greatest(input.items.map(i, i.price))", "math.abs(-3)", "math.abs(-2.5)", "math.abs(-9223372036854775808)",
	"math.sign(-3)", "math.sign(0.0)", "math.sign(5u)", "math.ceil(1.2)", "math.floor(-1.2)", "math.round(2.5)",
	"math.round(-2.5)", "math.trunc(-1.7)", "math.isInf(1.0 / 0.0)", "math.isNaN(0.0 / 0.0)", "math.isFinite(1.0)",
	"math.sqrt(16)", "math.sqrt(2.25)", "math.sqrt(9u)", "math.bitAnd(6, 3)", "math.bitOr(6u, 3u)", "math.bitXor(6, 3)",
	"math.bitNot(0)", "math.bitNot(0u)", "math.bitShiftLeft(1, 4)", "math.bitShiftRight(-16, 2)", "math.bitShiftLeft(1, 64)",
	"math.bitShiftRight(16u, 2)", "math.bitShiftLeft(1, -1)",
	// Encodings.
	"base64.encode(b'hi')", "base64.decode('aGk=')", "base64.decode('aGk')", "base64.decode('!!')",
	"base64.encodeUrl(b'\\xfb\\xff')", "base64.decodeUrl('-_8=')",
	"json.encode(input)", "json.parse('[1]')", "json.parse('7', int)",
	"yaml.encode(1)", "yaml.parse('a: 1')", "yaml.parse('1', int)", "false && json.encode(1) == ''",
	// Lists library.
	"lists.range(4)", "lists.range(0)", "[1, 2, 3, 4].slice(1, 3)", "[1].slice(0, 2)", "[1, 2].slice(2, 1)",
	"[1, [2, [3, [4]]]].flatten()", "[1, [2, [3, [4]]]].flatten(2)", "[1, [2]].flatten(-1)", "[1, 2, 1, 1.0, 'a', 'a'].distinct()",
	"[3, 1, 2].sort()", "['b', 'a'].sort()", "[1, 'a'].sort()", "dyn([[1]]).sort()", "[].sort()", "[1, 2, 3].reverse()",
	"[1, 2, 3].hasAll([2, 3])", "[1, 2].hasAny([3, 2.0])", "[1, 1].hasOnly([1, 2])", "[1, 2].hasExactly([2u, 1.0, 1])",
	"[[1], [2]].hasAll(dyn([[1.0]]))", "[2.5, 1].sort()",
	"input.items.sortBy(i, i.price).map(i, i.sku)", "[3, 1, 2].sortBy(x, -x)", "['bb', 'a', 'c'].sortBy(s, s.size())",
	"[1, 2].sortBy(x, x == 1 ? dyn('a') : 1)", "[1, 2].sortBy(x, dyn([x]))", "dyn({'a': 1}).sortBy(k, k)", "[1, 0].sortBy(x, 1 / x)", "dyn(1).sortBy(x, x)",
}

func TestDifferential(t *testing.T) {
	ref := newReference(t)
	for _, src := range differential {
		ro := ref.run(src, order())
		if !ro.compiled {
			t.Errorf("reference refused %q: %v", src, ro.err)
			continue
		}
		want, wantErr := ro.value, ro.err
		got, gotErr := evalTree(context.Background(), celTree(t, src), order(), DefaultCostLimit)
		if ro.costly && errors.Is(gotErr, ErrCostLimit) {
			continue // the reference's limit is higher, so its message is another
		}
		switch {
		case wantErr != nil && gotErr == nil:
			t.Errorf("%s = %#v, want error %q", src, got, wantErr)
		case wantErr == nil && gotErr != nil:
			t.Errorf("%s: error %q, want %#v", src, gotErr, want)
		case wantErr != nil && gotErr.Error() != wantErr.Error():
			t.Errorf("%s: error %q, want %q", src, gotErr, wantErr)
		case wantErr == nil && !reflect.DeepEqual(got, want):
			t.Errorf("%s = %#v, want %#v", src, got, want)
		}
	}
}

// TestFunctionsImplemented checks that every function the language declares
// has an implementation; operators that the evaluator runs itself, and
// functions that macros expand into, are left out.
func TestFunctionsImplemented(t *testing.T) {
	inEval := map[string]bool{
		"_&&_": true, "_||_": true, "_?_:_": true, "or": true, "orValue": true, "_?._": true, "@not_strictly_false": true,
		"__not_strictly_false__": true, "cel.@block": true, "@sortByAssociatedKeys": true,
		"in": true, "_in_": true, // old spellings of @in
	}
	for _, o := range overloads {
		if !inEval[o.Name] && functions[o.Name] == nil {
			t.Errorf("function %s of the checker's table is not implemented", o.Name)
		}
	}
	for name := range newReference(t).env.Functions() {
		if inEval[name] {
			continue
		}
		if functions[name] == nil {
			t.Errorf("function %s is not implemented", name)
		}
	}
}

func TestEvalCost(t *testing.T) {
	root := celTree(t, quadratic)
	vars := numbers(10)
	b := &budget{limit: math.MaxUint64}
	ev := &evaluator{ctx: context.Background(), act: vars.activation(), b: b}
	if _, err := ev.run(root); err != nil {
		t.Fatal(err)
	}
	// TestCostLimitAddsUp relies on ten such evaluations costing more than
	// 5000 and one less.
	if b.used <= 500 || b.used >= 5000 {
		t.Errorf("quadratic on ten numbers cost %d, want between 500 and 5000", b.used)
	}
	_, err := evalTree(context.Background(), root, numbers(1000), DefaultCostLimit)
	if !errors.Is(err, ErrCostLimit) || err.Error() != "expression exceeded its cost limit of 100000" {
		t.Errorf("on 1000 numbers: error %v, want ErrCostLimit", err)
	}
	long := strings.Repeat("x", 200_000)
	_, err = evalTree(context.Background(), celTree(t, "input.s.contains('y') && input.s.size() > 0"),
		Vars{Input: map[string]any{"s": long}}, 1000)
	if !errors.Is(err, ErrCostLimit) {
		t.Errorf("walking a long string: error %v, want ErrCostLimit", err)
	}
}

func TestEvalContext(t *testing.T) {
	root := celTree(t, quadratic)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := evalTree(ctx, root, numbers(3000), math.MaxUint64); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want context.DeadlineExceeded", err)
	}
}

// TestInputsNotCopied checks that reading a nested input allocates nothing
// proportional to the input.
func TestInputsNotCopied(t *testing.T) {
	items := make([]any, 1000)
	for i := range items {
		items[i] = map[string]any{"sku": "A", "n": i}
	}
	vars := Vars{Input: map[string]any{"items": items}}
	root := celTree(t, "input.items[999].n == 999")
	allocs := testing.AllocsPerRun(100, func() {
		ev := &evaluator{ctx: context.Background(), act: vars.activation(), b: &budget{limit: DefaultCostLimit}}
		if v, err := ev.run(root); v != true || err != nil {
			t.Fatal(v, err)
		}
	})
	if allocs > 10 {
		t.Errorf("%v allocations, want a few", allocs)
	}
}

// TestGoNumbers checks that numbers of any Go type in the inputs are CEL
// ints, uints and doubles, as cel-go reads them.
func TestGoNumbers(t *testing.T) {
	ref := newReference(t)
	vars := Vars{Input: map[string]any{"i": int(1), "i8": int8(-2), "i16": int16(3), "i32": int32(4), "i64": int64(5),
		"u": uint(6), "u8": uint8(7), "u16": uint16(8), "u32": uint32(9), "u64": uint64(10), "f32": float32(1.5)}}
	for _, src := range []string{"input.i + input.i8 + input.i16 + input.i32 + input.i64", "input.u + input.u8 + input.u16 + input.u32 + input.u64",
		"input.f32 * 2.0", "type(input.u8)", "[input.i8, input.u16, input.f32]", "input.i8 in [-2]"} {
		want := ref.run(src, vars)
		got, err := evalTree(context.Background(), celTree(t, src), vars, DefaultCostLimit)
		if err != nil || want.err != nil || !reflect.DeepEqual(got, want.value) {
			t.Errorf("%s = %#v, %v; want %#v, %v", src, got, err, want.value, want.err)
		}
	}
}

func TestMapLiteralOrder(t *testing.T) {
	ev := &evaluator{ctx: context.Background(), act: Vars{}.activation(), b: &budget{limit: DefaultCostLimit}}
	v, err := ev.run(celTree(t, "{'z': 1, 'a': 2, 3: 3}.map(k, string(k))"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v, []any{"z", "a", "3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestConstantErrors checks that constantError refuses what cel-go refuses
// when it builds a program, with the same message.
func TestConstantErrors(t *testing.T) {
	ref := newReference(t)
	for _, src := range []string{
		"int(1e19)", "int('4x')", "uint(-1)", "double('x')", "string(b'\\xff')", "string(null)", "bool('yes')",
		"duration('1d')", "timestamp('2024-13-01T00:00:00Z')", "'abc'.matches('[')", "matches('abc', '(')",
		"uint(string(duration('1h')))", "input.id.matches('[')", "[1, 2].map(x, int('y'))", "{'a': int('z')}",
		"execution.started_on + execution.started_on - duration('a,b,c')", "string(dyn([1, 'a']))", "type(int('q'))",
		"duration(dyn(null))", "int('12') + 1", "input.id.matches(input.id)", "int(input.id)", "string(dyn({1: 2}))", "dyn([int('w')])",
		"type(input.tags[{}])", "input[null]", "input[?[1]]", "input[b'a']", "input[type(1)]", "input[dyn(1)]", "input[1.5]",
	} {
		_, iss := ref.env.Compile(src)
		if iss.Err() != nil {
			t.Errorf("reference Compile(%q): %v", src, iss.Err())
			continue
		}
		_, refErr := ref.env.Program(mustCompile(t, ref, src), cel.EvalOptions(cel.OptOptimize))
		var want string
		if refErr != nil {
			want = refErr.Error()
		}
		var got string
		if err := constantError(celTree(t, src)); err != nil {
			got = err.Error()
		}
		// cel-go names its Go types of lists and maps; we say list and map.
		if strings.HasPrefix(want, "invalid qualifier type: *types.sliceList") {
			want = "invalid qualifier type: types.List"
		} else if strings.HasPrefix(want, "invalid qualifier type: *types.nativeMap") {
			want = "invalid qualifier type: types.Map"
		}
		if got != want {
			t.Errorf("constantError(%q) = %q, want %q", src, got, want)
		}
	}
}

func mustCompile(t *testing.T, ref *reference, src string) *cel.Ast {
	t.Helper()
	a, iss := ref.env.Compile(src)
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	return a
}

// TestCostNearReference checks that an evaluation costs about what cel-go
// counted, so that what ran within the limit before still does: within a
// factor of two either way over loops, string functions and lists.
func TestCostNearReference(t *testing.T) {
	ref := newReference(t)
	items := make([]any, 500)
	for i := range items {
		items[i] = map[string]any{"sku": fmt.Sprint("S", i), "qty": float64(i), "price": 1.5}
	}
	vars := Vars{Input: map[string]any{"list": numbers(100).Input.(map[string]any)["list"],
		"s": strings.Repeat("abc,", 2500), "items": items}}
	for _, src := range []string{
		quadratic, "input.s.split(',').size()", "input.s.matches('^(abc,)+$')",
		"input.items.map(i, i.qty * i.price)", "input.items.filter(i, i.qty > 10.0).map(i, i.sku)",
		"input.items.exists(i, i.sku == 'S499')", "input.items.all(i, i.qty >= 0.0)",
		"input.items.map(i, i.sku).join(',')", "input.s.contains('zz')",
	} {
		a, iss := ref.env.Compile(src)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		prg, err := ref.env.Program(a, cel.EvalOptions(cel.OptOptimize|cel.OptTrackCost))
		if err != nil {
			t.Fatal(err)
		}
		_, det, err := prg.Eval(map[string]any{"input": vars.Input, "steps": map[string]any{}, "execution": map[string]any{}})
		if err != nil {
			t.Fatal(src, err)
		}
		b := &budget{limit: math.MaxUint64}
		ev := &evaluator{ctx: context.Background(), act: vars.activation(), b: b}
		if _, err := ev.run(celTree(t, src)); err != nil {
			t.Fatal(src, err)
		}
		if want := *det.ActualCost(); b.used > 2*want || 2*b.used < want {
			t.Errorf("%s costs %d, cel-go counted %d", src, b.used, want)
		}
	}
}

// TestLeadingDot checks that a name with a leading dot skips the macros'
// variables, as the parser and checker leave it.
func TestLeadingDot(t *testing.T) {
	env := newEnv(t)
	for _, tt := range []struct {
		src  string
		want any
	}{
		{".int", "int"},
		{".input.id", "PO-1"},
		{"[1].map(input, .input.id)", []any{"PO-1"}},
		{"[1].map(input, input)", []any{int64(1)}},
	} {
		p, err := env.Compile(tt.src)
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.src, err)
			continue
		}
		got, err := p.Eval(context.Background(), order())
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Eval(%q) = %#v, %v; want %#v", tt.src, got, err, tt.want)
		}
	}
}
