package expr

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
)

// sexpr prints a tree compactly: calls as (f args...), member calls as
// (.f target args...), selections as (. operand field), has() tests as
// (has operand field), optional selections as (.? operand field), lists
// as [a b ?c], maps as {k:v ?k:v}, macros as (kind range var [filter] body),
// literals as Go syntax.
func sexpr(n exprNode) string {
	var b strings.Builder
	var walk func(exprNode)
	list := func(ns ...exprNode) {
		for _, n := range ns {
			b.WriteByte(' ')
			walk(n)
		}
	}
	walk = func(n exprNode) {
		switch n := n.(type) {
		case *literal:
			switch v := n.Value.(type) {
			case nil:
				b.WriteString("null")
			case uint64:
				fmt.Fprintf(&b, "%du", v)
			case float64:
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + "d")
			case string:
				b.WriteString(strconv.Quote(v))
			case []byte:
				b.WriteString("b" + strconv.Quote(string(v)))
			default:
				fmt.Fprint(&b, v)
			}
		case *ident:
			b.WriteString(n.Name)
		case *selectExpr:
			op := "."
			if n.Optional {
				op = ".?"
			}
			if n.Test {
				op = "has"
			}
			b.WriteString("(" + op)
			list(n.Operand)
			b.WriteString(" " + n.Field + ")")
		case *call:
			if n.Target != nil {
				b.WriteString("(." + n.Func)
				list(n.Target)
			} else {
				b.WriteString("(" + n.Func)
			}
			list(n.Args...)
			b.WriteString(")")
		case *listExpr:
			b.WriteString("[")
			for i, e := range n.Elems {
				if i > 0 {
					b.WriteByte(' ')
				}
				if n.Optional[i] {
					b.WriteByte('?')
				}
				walk(e)
			}
			b.WriteString("]")
		case *mapExpr:
			b.WriteString("{")
			for i, e := range n.Entries {
				if i > 0 {
					b.WriteByte(' ')
				}
				if e.Optional {
					b.WriteByte('?')
				}
				walk(e.Key)
				b.WriteByte(':')
				walk(e.Value)
			}
			b.WriteString("}")
		case *macro:
			fmt.Fprintf(&b, "(%s", [...]string{"all", "exists", "exists_one", "map", "filter", "bind", "optMap", "optFlatMap", "sortBy"}[n.Kind])
			list(n.Range)
			b.WriteString(" " + n.Var)
			if n.Filter != nil {
				list(n.Filter)
			}
			list(n.Body)
			b.WriteString(")")
		default:
			fmt.Fprintf(&b, "<%T>", n)
		}
	}
	walk(n)
	return b.String()
}

// oracleParse parses src with the reference parser. It reports whether
// src is accepted and whether it constructs a message, which parse refuses
// on purpose.
func oracleParse(env *cel.Env, src string) (a *celast.AST, ok, message bool) {
	parsed, iss := env.Parse(src)
	if iss.Err() != nil {
		return nil, false, false
	}
	a = parsed.NativeRep()
	celast.PostOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		message = message || e.Kind() == celast.StructKind
	}))
	return a, true, message
}

func TestParse(t *testing.T) {
	tests := []struct{ src, want string }{
		// Literals.
		{"0", "0"},
		{"42", "42"},
		{"0x1F", "31"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"- 7", "-7"},
		{"-0x10", "-16"},
		{"7u", "7u"},
		{"0x1fU", "31u"},
		{"18446744073709551615u", "18446744073709551615u"},
		{"1.5", "1.5d"},
		{"-2.5e3", "-2500d"},
		{".5", "0.5d"},
		{"1e3", "1000d"},
		{"1E-2", "0.01d"},
		{"true", "true"},
		{"false", "false"},
		{"null", "null"},
		{`"a\"b"`, `"a\"b"`},
		{`'it\'s'`, `"it's"`},
		{`'\a\b\f\n\r\t\v\\\?\` + "`" + `'`, `"\a\b\f\n\r\t\v\\?` + "`" + `"`},
		{`"\x41\X42\101\u00e9\U0001F600"`, `"ABAé😀"`},
		{`"\377"`, `"ÿ"`},
		{`r"a\nb"`, `"a\\nb"`},
		{`R'\d+'`, `"\\d+"`},
		{`"""two` + "\n" + `lines"""`, `"two\nlines"`},
		{`'''it's "quoted"'''`, `"it's \"quoted\""`},
		{"'''a\r\nb\rc'''", `"a\nb\nc"`},
		{`r"""a\n"""`, `"a\\n"`},
		{`"né"`, `"né"`},
		{`b"abc"`, `b"abc"`},
		{`B'\xff\377\n'`, `b"\xff\xff\n"`},
		{`br"\x"`, `b"\\x"`},
		{`b"é"`, `b"é"`},
		{`b"""x"""`, `b"x"`},
		// Names, selections, indexes and calls.
		{"input", "input"},
		{".input", ".input"},
		{"input.amount", "(. input amount)"},
		{"a.b.c", "(. (. a b) c)"},
		{"a.if", "(. a if)"},
		{"input.?discount", "(.? input discount)"},
		{"a.`content-type`.?`b.c/d e_1`", "(.? (. a content-type) b.c/d e_1)"},
		{"has(a.`x-y`)", "(has a x-y)"},
		{"a[0]", "(_[_] a 0)"},
		{"a[?'k']", `(_[?_] a "k")`},
		{"a.b[1].c", "(. (_[_] (. a b) 1) c)"},
		{"size(a)", "(size a)"},
		{"f()", "(f)"},
		{".f(1)", "(.f 1)"},
		{"a.size()", "(.size a)"},
		{"'x'.startsWith('a', 1)", `(.startsWith "x" "a" 1)`},
		{"math.greatest(1, 2)", "(.greatest math 1 2)"},
		{"optional.of(1).orValue(2)", "(.orValue (.of optional 1) 2)"},
		{"-1.size()", "(.size -1)"},
		{"1.e5", "(. 1 e5)"},
		{"a.all(x)", "(.all a x)"},
		{"x.bind(a, 1, a)", "(.bind x a 1 a)"},
		{"a.map(x, y, z, w)", "(.map a x y z w)"},
		// Lists and maps.
		{"[]", "[]"},
		{"[1, 2, 3]", "[1 2 3]"},
		{"[1,]", "[1]"},
		{"[?a, b]", "[?a b]"},
		{"{}", "{}"},
		{"{'a': 1, 2: [3]}", `{"a":1 2:[3]}`},
		{"{?'a': x, }", `{?"a":x}`},
		// Operators.
		{"!a", "(!_ a)"},
		{"!!a", "a"},
		{"!!!a", "(!_ a)"},
		{"-a", "(-_ a)"},
		{"--a", "a"},
		{"--1", "1"},
		{"---1", "(-_ 1)"},
		{"!-1", "(!_ -1)"},
		{"-(1)", "(-_ 1)"},
		{"-a.b", "(-_ (. a b))"},
		{"1 - 1", "(_-_ 1 1)"},
		{"1-1", "(_-_ 1 1)"},
		{"1 - -1", "(_-_ 1 -1)"},
		{"1 + 2 * 3", "(_+_ 1 (_*_ 2 3))"},
		{"(1 + 2) * 3", "(_*_ (_+_ 1 2) 3)"},
		{"1 - 2 - 3", "(_-_ (_-_ 1 2) 3)"},
		{"8 / 4 % 3 * 2", "(_*_ (_%_ (_/_ 8 4) 3) 2)"},
		{"1 + 2 < 4", "(_<_ (_+_ 1 2) 4)"},
		{"a < b == c", "(_==_ (_<_ a b) c)"},
		{"a <= b != c >= d > e", "(_>_ (_>=_ (_!=_ (_<=_ a b) c) d) e)"},
		{"'a' in ['a']", `(@in "a" ["a"])`},
		{"a && b", "(_&&_ a b)"},
		{"a || b && c", "(_||_ a (_&&_ b c))"},
		{"a && b && c", "(_&&_ (_&&_ a b) c)"},
		{"a && b && c && d", "(_&&_ (_&&_ a b) (_&&_ c d))"},
		{"a || b || c || d || e", "(_||_ (_||_ (_||_ a b) c) (_||_ d e))"},
		{"a ? b : c", "(_?_:_ a b c)"},
		{"a ? b : c ? d : e", "(_?_:_ a b (_?_:_ c d e))"},
		{"a || b ? c && d : e", "(_?_:_ (_||_ a b) (_&&_ c d) e)"},
		{"1 // a comment\n + 2", "(_+_ 1 2)"},
		// Macros.
		{"has(a.b)", "(has a b)"},
		{"has(a.b.c)", "(has (. a b) c)"},
		{"l.all(x, x > 0)", "(all l x (_>_ x 0))"},
		{"l.exists(x, x)", "(exists l x x)"},
		{"l.exists_one(x, x)", "(exists_one l x x)"},
		{"l.map(x, x * 2)", "(map l x (_*_ x 2))"},
		{"l.map(x, x > 1, x * 2)", "(map l x (_>_ x 1) (_*_ x 2))"},
		{"l.filter(x, x > 1)", "(filter l x (_>_ x 1))"},
		{"cel.bind(x, 1, x + 1)", "(bind 1 x (_+_ x 1))"},
		{"o.optMap(v, v + 1)", "(optMap o v (_+_ v 1))"},
		{"o.optFlatMap(v, v.?a)", "(optFlatMap o v (.? v a))"},
		{"[2, 1].sortBy(x, -x)", "(sortBy [2 1] x (-_ x))"},
		{"l.map(x, l.filter(y, y == x))", "(map l x (filter l y (_==_ y x)))"},
	}
	for _, tt := range tests {
		n, err := parse(tt.src, DefaultMaxNesting)
		if err != nil {
			t.Errorf("parse(%q): %v", tt.src, err)
			continue
		}
		if got := sexpr(n); got != tt.want {
			t.Errorf("parse(%q) = %s, want %s", tt.src, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src          string
		line, column int
		message      string
	}{
		{"input.amount >", 1, 15, "Syntax error: unexpected end of expression"},
		{"(1 + 2", 1, 7, "Syntax error: expected ')', found end of expression"},
		{"1 + 2)", 1, 6, "Syntax error: unexpected ')'"},
		{"[1, 2", 1, 6, "Syntax error: expected ']', found end of expression"},
		{"{'a' 1}", 1, 6, "Syntax error: expected ':', found '1'"},
		{"f(a,)", 1, 5, "Syntax error: unexpected ')'"},
		{"a ? b", 1, 6, "Syntax error: expected ':', found end of expression"},
		{"a.", 1, 3, "Syntax error: expected a name, found end of expression"},
		{"a.true", 1, 3, "Syntax error: expected a name, found 'true'"},
		{"a.`b`()", 1, 6, "Syntax error: unexpected '('"},
		{"a.`b+c`", 1, 3, "Syntax error: a name in backquotes may hold only letters, digits and _ . - / or space"},
		{"a = 1", 1, 3, "Syntax error: unexpected character '='"},
		{"a\n  # b", 2, 3, "Syntax error: unexpected character '#'"},
		{"1e", 1, 2, "Syntax error: unexpected 'e'"},
		{"0x", 1, 2, "Syntax error: unexpected 'x'"},
		{"1.", 1, 3, "Syntax error: expected a name, found end of expression"},
		{"1.0u", 1, 4, "Syntax error: unexpected 'u'"},
		{"9223372036854775808", 1, 1, "Syntax error: invalid int literal 9223372036854775808"},
		{"-9223372036854775809", 1, 1, "Syntax error: invalid int literal -9223372036854775809"},
		{"1 + -0x8000000000000001", 1, 5, "Syntax error: invalid int literal -0x8000000000000001"},
		{"18446744073709551616u", 1, 1, "Syntax error: invalid uint literal 18446744073709551616u"},
		{"1e400", 1, 1, "Syntax error: invalid double literal 1e400"},
		{"'abc", 1, 1, "Syntax error: unterminated string"},
		{"'a\nb'", 1, 1, "Syntax error: unterminated string"},
		{`"""abc""`, 1, 1, "Syntax error: unterminated string"},
		{`x + "\q"`, 1, 6, `Syntax error: invalid escape sequence \q`},
		{`"\x4"`, 1, 2, `Syntax error: invalid escape sequence \x4"`},
		{`"\400"`, 1, 2, `Syntax error: invalid escape sequence \4`},
		{`"\18"`, 1, 2, `Syntax error: invalid escape sequence \18"`},
		{`"\ud800"`, 1, 2, `Syntax error: invalid Unicode code point \ud800`},
		{`"\U00110000"`, 1, 2, `Syntax error: invalid Unicode code point \U00110000`},
		{`b"\u0041"`, 1, 3, `Syntax error: invalid escape sequence \u`},
		{"if", 1, 1, "Syntax error: if is a reserved word"},
		{"a + while(1)", 1, 5, "Syntax error: while is a reserved word"},
		{"null.x + in", 1, 10, "Syntax error: unexpected 'in'"},
		{"!-x", 1, 2, "Syntax error: unexpected '-'"},
		{"a.?b(1)", 1, 5, "Syntax error: unexpected '('"},
		{"Msg{a: 1}", 1, 1, "Syntax error: message construction is not supported"},
		{"x + .google.protobuf.Int64Value{value: 1}", 1, 6, "Syntax error: message construction is not supported"},
		{"has(a)", 1, 5, "Syntax error: has() takes a field selection, such as has(input.field)"},
		{"has(a.?b)", 1, 6, "Syntax error: has() takes a field selection, such as has(input.field)"},
		{"l.all(x.y, true)", 1, 8, "Syntax error: the first argument of all() must be a variable name"},
		{"l.map(1, 2)", 1, 7, "Syntax error: the first argument of map() must be a variable name"},
		{"cel.bind('x', 1, 2)", 1, 10, "Syntax error: the first argument of bind() must be a variable name"},
		{"l.exists(__result__, true)", 1, 10, "Syntax error: exists() may not use the variable name __result__"},
		{"{}.sortBy(x, x)", 1, 1, "Syntax error: sortBy() applies to a list, not a literal"},
		{"math.greatest()", 1, 1, "Syntax error: math.greatest() needs at least one argument"},
		{"math.least(1, 'a')", 1, 15, "Syntax error: math.least() takes numbers or a list of numbers"},
		{"math.least([1, 'a'])", 1, 16, "Syntax error: math.least() takes numbers or a list of numbers"},
		{"math.least([])", 1, 12, "Syntax error: math.least() takes numbers or a list of numbers"},
		{"((((1))))", 1, 1, "expression nests more than 4 levels deep"},
		{"a.b.c.d.e.f", 1, 1, "expression nests more than 4 levels deep"},
	}
	for _, tt := range tests {
		limit := DefaultMaxNesting
		if strings.HasPrefix(tt.message, "expression nests") {
			limit = 4
		}
		n, err := parse(tt.src, limit)
		if err == nil {
			t.Errorf("parse(%q) = %s, want an error", tt.src, sexpr(n))
			continue
		}
		if n != nil || err.Line != tt.line || err.Column != tt.column || err.Message != tt.message {
			t.Errorf("parse(%q) error at %d:%d %q, want %d:%d %q", tt.src, err.Line, err.Column, err.Message, tt.line, tt.column, tt.message)
		}
	}
}

// valid holds sources the reference parser accepts, covering every
// construct.
var valid = []string{
	`input.amount > 1000`,
	`input.amount >= 1500.0 && input.amount < 1501`,
	`steps.lookup.output.limit > input.amount`,
	`int(input.amount) * 2`,
	`input.currency.lowerAscii()`,
	`input.id.startsWith('PO-') && input.id.size() == 4`,
	`input.customer.email.split('@')[1]`,
	`'%s owes %.2f'.format([input.customer.name, input.amount])`,
	`input['currency']`,
	`has(input.customer.email)`,
	`input.?discount.orValue(0.0)`,
	`input.note == null`,
	`{'sku': input.items[0].sku, 'qty': input.items[0].qty}`,
	`input.items.map(i, i.qty * i.price)`,
	`input.items.filter(i, i.price > 50).map(i, i.sku)`,
	`input.items.exists(i, i.sku == 'A')`,
	`input.items.all(i, i.qty > 0)`,
	`input.items.exists_one(i, i.qty > 1)`,
	`input.items.map(i, i.qty > 1, i.sku)`,
	`'eu' in input.tags`,
	`[3, 1, 2].sort()`,
	`lists.range(3)`,
	`math.greatest(input.items.map(i, i.price))`,
	`cel.bind(gross, input.amount * 1.2, gross > 1000)`,
	`base64.encode(b'hi')`,
	`execution.started_on + duration('1h')`,
	`timestamp('2024-01-01T00:00:00Z').getHours()`,
	`type(input.amount) == double`,
	`optional.of(1).optMap(x, x + 1)`,
	`optional.none().optFlatMap(x, optional.of(x))`,
	`[3, 1].sortBy(x, -x)`,
	`input.items.sortBy(i, i.price)`,
	`a.b.sortBy(x, x)`,
	`f(1).sortBy(x, x)`,
	`[1, 2].map(x, x).sortBy(y, y)`,
	`a[0].sortBy(x, x)`,
	`[?optional.of(1), 2]`,
	`{?'a': optional.none(), 'b': 2}`,
	`input[?'x']`,
	`input.?a.?b`,
	`0`, `-0`, `123`, `0x0`, `0xABCdef`, `-0x7fffffffffffffff`, `9223372036854775807`,
	`-9223372036854775808`, `-0x8000000000000000`, `0u`, `0U`, `18446744073709551615u`,
	`0xffffffffffffffffu`, `1.0`, `1e10`, `1E+10`, `1e-10`, `.1`, `.1e1`, `-.5`, `- 1.5`,
	`0.0`, `00`, `007`, `1.7976931348623157e308`, `4.9e-324`, `1e-400`,
	`true`, `false`, `null`, `!true`, `!!false`, `-(-1)`, `--1`, `---1`, `!-1`, `.1.a`, `[,]`, `{,}`,
	`'a'`, `"a"`, `''`, `""`, `'''a'''`, `""""""`, `r''`, `R""`, `r'\'`, `'\''`, `"\""`,
	`'\a\b\f\n\r\t\v\\\?\"\'\` + "`" + `'`, `'\x00\xFF\X0a'`, `'\000\377\123'`, `'\u0000\uFFFF'`,
	`'\U00000000\U0010FFFF'`, `b''`, `B""`, `b'\x00\377'`, `bR'\u'`, `Br"\x"`, `b'''\n'''`,
	"'''line\nline'''", "\"\"\"a\"b\"\"c\"\"\"", "r'''\\'''", `'é' + "日本"`, `'` + "\t" + `'`,
	`a`, `_`, `_a1`, `A`, `.a`, `.a.b`, `a.b.c.d`, `a.if.while`, `a.as`, `a._`,
	`f()`, `f(1)`, `f(1, 2, 3)`, `.f()`, `a.f()`, `a.f(1, 2)`, `a.b.f().g(h())`,
	`1.f()`, `-1.f()`, `'a'.f()`, `[].f()`, `{}.f()`, `(1).f()`, `1.e`, `1.e5`, `a.e5`,
	`a[0]`, `a[0][1]`, `a['x'].y`, `a[b[c]]`, `[1][0]`, `{1: 2}[1]`, `a[?0]`, `a.?b[?c]`,
	`[]`, `[1]`, `[1,]`, `[1, 2]`, `[[], [[]]]`, `[?a]`, `[?a, ?b,]`, `[a ? b : c]`,
	`{}`, `{1: 2}`, `{1: 2,}`, `{'a': {'b': []}}`, `{?a: b}`, `{a: b, ?c: d}`, `{a ? b : c: d}`,
	`1 + 2`, `1 - 2`, `1 * 2`, `1 / 2`, `1 % 2`, `1+2*3-4/5%6`, `(1 + 2) * 3`, `1 - -1`, `1--1`,
	`1 < 2`, `1 <= 2`, `1 > 2`, `1 >= 2`, `1 == 2`, `1 != 2`, `1 in [1]`, `a < b < c`,
	`a == b == c`, `a in b in c`, `1 + 2 == 3 - 0`, `a && b`, `a || b`, `a && b || c && d`,
	`a || b || c || d || e || f || g`, `a && b && c && d && e`, `a ? b : c`, "a.`b`", "a.`b-c/d.e f_1`", "has(a.`b`)", "a.`b`.c",
	`a ? b : c ? d : e`, `(a ? b : c) ? d : e`, `a || b ? c : d`, `!a ? -b : c`,
	`has(a.b)`, `has(a.b.c)`, `has(.a.b)`, `has(a[0].b)`, `has(a.b) && has(c.d)`,
	`l.all(x, x)`, `l.exists(x, x)`, `l.exists_one(x, x)`, `l.map(x, x)`, `l.map(x, x, x)`,
	`l.filter(x, x)`, `l.all(.x, x)`, `cel.bind(x, 1, x)`, `cel.bind(x, 1, cel.bind(y, x, y))`,
	`o.optMap(x, x)`, `o.optFlatMap(x, x)`, `l.map(x, l.map(y, x + y))`,
	`l.all(x)`, `l.all(x, y, z)`, `l.map(x)`, `l.filter(x, y, z)`, `x.bind(a, b, c)`, `cel.bind(a, b)`,
	`has(a.b, c)`, `has()`, `a.has(b)`, `l.sortBy(x)`, `o.optMap(x)`, `all(l, x, x)`, `.has(a)`,
	`l.all(__result__)`, `cel.bind(__result__, 1, 2)`, `o.optMap(__result__, 1)`, `[1].all(x, y.z)`,
	`f(a, b)(c)`[:7], `1 // comment`, "1 +\n2", "\t1\r\n+\f2", `a.b // c.d`, `"//" + a`,
	`in_x`, `truex`, `nullable`, `x.in_`, `a.null_`, `lets`, `for_`, `x.for`, `x.const()`,
	`google.protobuf.Int64Value`, `int`, `dyn(1)`, `type(1)`,
	`math.greatest(1)`, `math.greatest(-1.5)`, `math.greatest(2u)`, `math.greatest(a)`, `math.greatest([1, 2.0])`,
	`math.greatest([a, -1])`, `math.least(1, 2)`, `math.least(a, b, c)`, `math.least(a.b, f(1), l.map(x, x))`,
	`math.least([1][0], 2)`, `x.greatest()`, `x.least('a')`, `math.max('a')`, `math.greatest(a.?b)`,
}

// invalid holds sources the reference parser refuses.
var invalid = []string{
	``, ` `, `// only a comment`, `(`, `)`, `[`, `]`, `{`, `}`, `(1`, `1)`, `[1`, `1]`, `{1: 2`,
	`{1}`, `{1: }`, `{: 1}`, `[,,]`, `{,,}`, `[,1]`, `{1:2,,}`, `f(,)`, `f(1,)`, `f(1 2)`, `(1, 2)`, `()`, `a.`, `.`,
	`a..b`, `a.1`, `a.(b)`, `a[]`, `a[1, 2]`, `a[?]`, `1 +`, `+ 1`, `* 1`, `1 * * 2`, `1 2`,
	`a b`, `a ?`, `a ? b`, `a ? b :`, `? a : b`, `a : b`, `a && `, `|| a`, `a & b`, `a | b`, `a = b`,
	`a === b`, `a <> b`, `a => b`, `!`, `-`, `!-a`, `!(-a`, `a!`, `a-`, `a.?`, `a.?1`, `?a`, `-!a`, `a ? b ? c : d : e`,
	`[?]`, `{?: 1}`, `a?.b`, `a.?b()`, `a.?b(1)`, `..a`, `. a` + `(`,
	`1e`, `1e+`, `1E-`, `0x`, `0xg`, `0X1`, `1.`, `1.0.0`, `1u2`, `1.0u`, `1e3u`, `0x1.0`, `1_000`,
	`9223372036854775808`, `-9223372036854775809`, `0x8000000000000000`, `-0x8000000000000001`,
	`18446744073709551616u`, `0x10000000000000000u`, `99999999999999999999`, `1e309`, `-1e309`,
	`--9223372036854775808`, `-18446744073709551615u` + `0`,
	`'`, `"`, `'a`, `"a`, `'a"`, `'''a''`, `"""a""`, `'a` + "\n" + `'`, `"a` + "\r" + `"`, `r'a`,
	`r'\''`, `'\'`, `'\q'`, `'\x'`, `'\x1'`, `'\xg0'`, `'\u123'`, `'\u12345'`[:6] + `'`, `'\U0010FFF'`,
	`'\U00110000'`, `'\uD800'`, `'\udfff'`, `'\400'`, `'\8'`, `'\08'`, `'\0'`, `'\01'`, `b'\u0041'`,
	`b'\U00000041'`, `rb'a'`, `bb'a'`, `x'a'`, `'a''b'`, `'a' 'b'`, `b'a'b`, "\"\"\"a", "'''",
	`if`, `else`, `for`, `while`, `break`, `continue`, `return`, `function`, `import`, `package`,
	`namespace`, `var`, `let`, `const`, `loop`, `void`, `as`, `in`, `a + if`, `if(1)`, `.if`,
	`.while(1)`, `f(for)`, `[as]`, `{let: 1}`, `a.true`, `a.false`, `a.null`, `a.in`, `a.true()`,
	`true()`, `null(1)`, `in(1)`, `true.a`[:5] + `(`, `#`, `$a`, `a@b`, `a;b`, "a\x00", `a^b`, `~a`, "`a`",
	"a.`b`()", "`b`", "a.?`b`()", "a.``", "a.`b", "a.`b+c`", "a.`b`.`c`()", `has(a)`, `has(1)`, `has(a[0])`, `has(a.?b)`, `has(f(a))`, `l.all(1, x)`,
	`l.all(a.b, x)`, `l.exists(f(x), x)`, `l.exists_one('x', x)`, `l.map(x.y, x)`, `l.map(1, 2, 3)`,
	`l.filter([x], x)`, `l.all(__result__, x)`, `l.map(__result__, 1)`, `l.filter(__result__, 1)`,
	`cel.bind(1, 2, 3)`, `cel.bind(a.b, 1, 2)`, `o.optMap(1, 2)`, `o.optFlatMap(a.b, 2)`,
	`l.sortBy(1, x)`, `l.sortBy(__result__, x)`, `1.sortBy(x, x)`, `'a'.sortBy(x, x)`, `{}.sortBy(x, x)`,
	`{1: 2}.sortBy(x, x)`, `a && (b`, `f(a`, `f(a,`, `a[0`, `a[?0`, `{'a': 1 'b': 2}`, `[1 2]`,
	`math.greatest()`, `math.least()`, `math.greatest('a')`, `math.greatest([])`, `math.greatest(['a'])`,
	`math.greatest([1, [2]])`, `math.least({})`, `math.least(1, 'a')`, `math.least(1, 2, [3])`, `math.least(null, 1)`,
	`math.greatest(true)`, `math.greatest(b'1', 2)`, `math.least(1, {1: 2})`, `math.greatest([{}])`,
	"1 /* c */ + 2", `a.b.`, `a.b(`, `a.b(1`, `a.b(1,`, `a.b(1,)`,
}

func TestParseAgreesWithReference(t *testing.T) {
	env := referenceEnv(t, DefaultMaxNesting)
	var corpus []string
	for _, src := range valid {
		corpus = append(corpus, src)
		// Every proper prefix, and the source without each one character,
		// are mostly broken in ways worth comparing too.
		for i := range len(src) {
			corpus = append(corpus, src[:i], src[:i]+src[i+1:])
		}
	}
	corpus = append(corpus, invalid...)
	refused, accepted := 0, 0
	for _, src := range corpus {
		_, want, message := oracleParse(env, src)
		if message {
			continue
		}
		n, err := parse(src, DefaultMaxNesting)
		if got := err == nil; got != want {
			t.Errorf("parse(%q) = %v, %v; the reference parser accepts it: %v", src, n, err, want)
		}
		if want {
			accepted++
		} else {
			refused++
		}
	}
	for _, src := range valid {
		if _, ok, _ := oracleParse(env, src); !ok {
			t.Errorf("%q is listed as valid, but the reference parser refuses it", src)
		}
	}
	for _, src := range invalid {
		if _, ok, message := oracleParse(env, src); ok && !message {
			t.Errorf("%q is listed as invalid, but the reference parser accepts it", src)
		}
	}
	t.Logf("compared %d accepted and %d refused sources", accepted, refused)
}

// nested builds sources of one shape nested n levels deep.
var nested = []func(n int) string{
	func(n int) string { return strings.Repeat("(", n) + "1" + strings.Repeat(")", n) },
	func(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) },
	func(n int) string { return strings.Repeat("{1: ", n) + "1" + strings.Repeat("}", n) },
	func(n int) string { return strings.Repeat("f(", n) + "1" + strings.Repeat(")", n) },
	func(n int) string { return "input.a" + strings.Repeat(" + input.a", n) },
	func(n int) string { return "1" + strings.Repeat(" + 1", n) },
	func(n int) string { return strings.Repeat("1 * 2 + ", n) + "1" },
	func(n int) string { return strings.Repeat("1 + (", n) + "1" + strings.Repeat(")", n) },
	func(n int) string { return strings.Repeat("1 < (", n) + "1" + strings.Repeat(")", n) },
	func(n int) string { return strings.Repeat("-(", n) + "a" + strings.Repeat(")", n) },
	func(n int) string { return "a" + strings.Repeat(".b", n) },
	func(n int) string { return "a" + strings.Repeat("[0]", n) },
	func(n int) string { return "a" + strings.Repeat(".?b[?0]", n) },
	func(n int) string { return "a" + strings.Repeat(".f()", n) },
	func(n int) string { return strings.Repeat("a ? b : ", n) + "c" },
	func(n int) string { return "a" + strings.Repeat(" < b", n) },
	func(n int) string { return "a" + strings.Repeat(" && a", n) },
	func(n int) string { return "a" + strings.Repeat(" || a && a", n) },
	func(n int) string { return strings.Repeat("l.map(x, ", n) + "x" + strings.Repeat(")", n) },
	func(n int) string { return strings.Repeat("cel.bind(x, 1, ", n) + "x" + strings.Repeat(")", n) },
	func(n int) string { return strings.Repeat("has(a.", n) + "b" + strings.Repeat(".c)", n) },
	func(n int) string { return strings.Repeat("a.b[", n) + "1" + strings.Repeat("]", n) },
	func(n int) string { return strings.Repeat("!(a.b < ", n) + "1" + strings.Repeat(")", n) },
	func(n int) string { return strings.Repeat("[a + b * (", n) + "1" + strings.Repeat(")]", n) },
}

func TestParseNestingAgreesWithReference(t *testing.T) {
	for limit := 2; limit <= 6; limit++ {
		env := referenceEnv(t, limit)
		for i, shape := range nested {
			for n := range 2*limit + 2 {
				src := shape(n)
				_, want, _ := oracleParse(env, src)
				_, err := parse(src, limit)
				if got := err == nil; got != want {
					t.Errorf("shape %d, limit %d: parse(%q) error = %v; the reference parser accepts it: %v", i, limit, src, err, want)
				}
			}
		}
	}
}

// key names a node by kind and name the way both trees spell it.
func key(n exprNode) string {
	switch n := n.(type) {
	case *literal:
		return "literal"
	case *ident:
		return "ident " + n.Name
	case *selectExpr:
		if n.Optional {
			return "call _?._"
		}
		return "select " + n.Field
	case *call:
		return "call " + n.Func
	case *listExpr:
		return "list"
	case *mapExpr:
		return "map"
	}
	return "comprehension"
}

func celKey(e celast.Expr) string {
	switch e.Kind() {
	case celast.LiteralKind:
		return "literal"
	case celast.IdentKind:
		return "ident " + e.AsIdent()
	case celast.SelectKind:
		return "select " + e.AsSelect().FieldName()
	case celast.CallKind:
		return "call " + e.AsCall().FunctionName()
	case celast.ListKind:
		return "list"
	case celast.MapKind:
		return "map"
	}
	return "comprehension"
}

// children returns the nodes directly under n.
func children(n exprNode) []exprNode {
	switch n := n.(type) {
	case *selectExpr:
		return []exprNode{n.Operand}
	case *call:
		if n.Target != nil {
			return append([]exprNode{n.Target}, n.Args...)
		}
		return n.Args
	case *listExpr:
		return n.Elems
	case *mapExpr:
		var kids []exprNode
		for _, e := range n.Entries {
			kids = append(kids, e.Key, e.Value)
		}
		return kids
	case *macro:
		kids := []exprNode{n.Range, n.Body}
		if n.Filter != nil {
			kids = append(kids, n.Filter)
		}
		return kids
	}
	return nil
}

// TestParsePositions checks that every node points where the reference
// parser's node of the same kind and name points.
func TestParsePositions(t *testing.T) {
	env := referenceEnv(t, DefaultMaxNesting)
	for _, src := range valid {
		a, ok, _ := oracleParse(env, src)
		if !ok {
			continue
		}
		want := map[string]bool{}
		info := a.SourceInfo()
		celast.PostOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
			if r, found := info.GetOffsetRange(e.ID()); found {
				want[fmt.Sprintf("%s@%d", celKey(e), r.Start)] = true
			}
		}))
		root, err := parse(src, DefaultMaxNesting)
		if err != nil {
			t.Errorf("parse(%q): %v", src, err)
			continue
		}
		var walk func(exprNode)
		walk = func(n exprNode) {
			k := key(n)
			// math.greatest and math.least are macros there, calls of
			// math.@max and math.@min.
			if c, ok := n.(*call); ok && c.Target != nil && sexpr(c.Target) == "math" && (c.Func == "greatest" || c.Func == "least") {
				k = map[string]string{"greatest": "call math.@max", "least": "call math.@min"}[c.Func]
				n = &call{Offset: c.Offset, Args: c.Args}
			}
			// The reference parser counts characters, parse bytes.
			got := fmt.Sprintf("%s@%d", k, utf8.RuneCountInString(src[:n.Pos()]))
			if !want[got] {
				t.Errorf("parse(%q): %s has no counterpart in the reference tree %v", src, got, want)
			}
			for _, k := range children(n) {
				walk(k)
			}
		}
		walk(root)
	}
}

// FuzzParse checks that parse never panics and accepts what the reference
// parser accepts, at the default nesting limit and at a low one that fuzzed
// sources reach.
func FuzzParse(f *testing.F) {
	for _, src := range append(valid, invalid...) {
		f.Add(src)
	}
	limits := []int{DefaultMaxNesting, 4}
	envs := []*cel.Env{referenceEnv(f, limits[0]), referenceEnv(f, limits[1])}
	f.Fuzz(func(t *testing.T, src string) {
		if utf8.RuneCountInString(src) > DefaultMaxLength {
			return
		}
		for i, env := range envs {
			_, want, message := oracleParse(env, src)
			n, err := parse(src, limits[i])
			if message {
				return
			}
			if got := err == nil; got != want {
				t.Fatalf("parse(%q, %d) = %v, %v; the reference parser accepts it: %v", src, limits[i], n, err, want)
			}
			if err != nil && (err.Line < 1 || err.Column < 1 || err.Message == "") {
				t.Fatalf("parse(%q) error %+v, want a message at line and column from 1", src, err)
			}
		}
	})
}

// benchSource is a workflow condition of typical size.
const benchSource = `has(steps.lookup) && steps.lookup.output.limit > input.amount && ` +
	`input.items.all(i, i.qty > 0 && i.sku.startsWith('A')) ? 'auto' : 'review'`

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := parse(benchSource, DefaultMaxNesting); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseReference(b *testing.B) {
	env := referenceEnv(b, DefaultMaxNesting)
	for b.Loop() {
		if _, iss := env.Parse(benchSource); iss.Err() != nil {
			b.Fatal(iss.Err())
		}
	}
}
