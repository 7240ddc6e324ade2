package expr

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testTree parses src into a syntax tree.
func testTree(t testing.TB, src string) exprNode {
	t.Helper()
	root, err := parse(src, DefaultMaxNesting)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return root
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
		got, err := check(testTree(t, tt.src), tt.src)
		if err != nil {
			t.Errorf("check(%q): %v", tt.src, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("check(%q) = %s, want %s", tt.src, got, tt.want)
		}
	}
}

func TestMayBeBool(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"true", true},
		{"input.ok", true},
		{"input.a > 1", true},
		{"[true][0]", true},
		{"1", false},
		{"null", false},
		{"[true]", false},
		{"{'a': true}", false},
		{"optional.of(true)", false},
		{"input.?ok", false},
	}
	for _, tt := range tests {
		typ, err := check(testTree(t, tt.src), tt.src)
		if err != nil {
			t.Errorf("check(%q): %v", tt.src, err)
			continue
		}
		if got := typ.mayBeBool(); got != tt.want {
			t.Errorf("check(%q) = %s, mayBeBool() = %v, want %v", tt.src, typ, got, tt.want)
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
		{"has(1.f)", 1, 4, "type 'int' does not support field selection"},
		{"[?1]", 1, 3, "expected type 'optional_type(int)' but found 'int'"},
		{"[[1]].sortBy(x, x)", 1, 13, "found no matching overload for 'sortBy' applied to 'list(list(int)).(list(list(int)))'"},
		{"optional.of(1).optFlatMap(x, x)", 1, 26, "found no matching overload for '_?_:_' applied to '(bool, int, optional_type(dyn))'"},
		{"1.optMap(x, x)", 1, 9, "found no matching overload for 'hasValue' applied to 'int.()'"},
	}
	for _, tt := range tests {
		_, err := check(testTree(t, tt.src), tt.src)
		if err == nil {
			t.Errorf("check(%q) succeeded, want error %q", tt.src, tt.msg)
			continue
		}
		if err.Line != tt.line || err.Column != tt.column || err.Message != tt.msg {
			t.Errorf("check(%q) error at %d:%d %q, want %d:%d %q", tt.src, err.Line, err.Column, err.Message, tt.line, tt.column, tt.msg)
		}
	}
}

// canonicalSignature spells an overload with its type parameters renamed
// in order of appearance, so that signatures compare whatever their
// parameters are called.
func canonicalSignature(name string, member bool, params []string, result string) string {
	sig := fmt.Sprintf("%s %v (%s) %s", name, member, strings.Join(params, ", "), result)
	names := map[string]string{}
	return regexp.MustCompile(`<[^>]+>`).ReplaceAllStringFunc(sig, func(p string) string {
		if _, ok := names[p]; !ok {
			names[p] = fmt.Sprintf("<%d>", len(names))
		}
		return names[p]
	})
}

// TestSignaturesMatchCelGo checks that the table of functions declares
// exactly the overloads cel-go declares, except for the internal names and
// deprecated aliases expressions cannot or should not call.
func TestSignaturesMatchCelGo(t *testing.T) {
	renamed := map[string]string{"math.@max": "math.greatest", "math.@min": "math.least", "@sortByAssociatedKeys": "sortBy"}
	skipped := []string{"in", "_in_", "__not_strictly_false__", "@not_strictly_false", "cel.@block", "_?._"}
	var want, got []string
	for name, fn := range referenceEnv(t, DefaultMaxNesting).Functions() {
		if slices.Contains(skipped, name) {
			continue
		}
		if r, ok := renamed[name]; ok {
			name = r
		}
		for _, o := range fn.OverloadDecls() {
			var params []string
			for _, p := range o.ArgTypes() {
				params = append(params, p.String())
			}
			want = append(want, canonicalSignature(name, o.IsMemberFunction(), params, o.ResultType().String()))
		}
	}
	for _, o := range overloads {
		var params []string
		for _, p := range o.Params {
			params = append(params, p.String())
		}
		got = append(got, canonicalSignature(o.Name, o.Member, params, o.Result.String()))
	}
	slices.Sort(want)
	slices.Sort(got)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the table lacks %s", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("the table has %s, which cel-go does not declare", g)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the table has %d overloads, cel-go %d", len(got), len(want))
	}
}

// checkSamples are expressions of many types, the arguments of generated calls.
var checkSamples = []string{"1", "1u", "1.5", "'a'", "b'a'", "true", "null", "input", "input.x", "steps",
	"[1, 2]", "[1, 'a']", "['a']", "[1.5]", "[1u]", "[]", "{'a': 1}", "{}", "{1: 'a'}", "[input]", "{'a': input}",
	"timestamp('2024-01-01T00:00:00Z')", "duration('1h')", "optional.of(1)", "optional.none()", "int", "type(1)",
	"[[1]]", "[optional.of(1)]", "[true]", "[duration('1s')]"}

// sampleOf is an expression of type t.
func sampleOf(t celType) string {
	switch t.Kind {
	case kindParam, kindInt:
		return "1"
	case kindDyn:
		return "input"
	case kindList:
		return "[" + sampleOf(t.Args[0]) + "]"
	case kindMap:
		return "{" + sampleOf(t.Args[0]) + ": " + sampleOf(t.Args[1]) + "}"
	case kindOptional:
		return "optional.of(" + sampleOf(t.Args[0]) + ")"
	case kindType:
		return "int"
	case kindTimestamp:
		return "timestamp(0)"
	case kindDuration:
		return "duration('1s')"
	}
	return map[typeKind]string{kindUint: "1u", kindDouble: "1.5", kindString: "'a'", kindBytes: "b'a'", kindBool: "true", kindNull: "null"}[t.Kind]
}

// callSource spells a call of a function of the table.
func callSource(name string, member bool, args []string) string {
	ops := map[string]string{"_+_": "+", "_-_": "-", "_*_": "*", "_/_": "/", "_%_": "%", "_==_": "==", "_!=_": "!=",
		"_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">=", "_&&_": "&&", "_||_": "||", "@in": "in"}
	p := func(s string) string { return "(" + s + ")" }
	switch {
	case ops[name] != "":
		return p(args[0]) + " " + ops[name] + " " + p(args[1])
	case name == "!_" || name == "-_":
		return name[:1] + p(args[0])
	case name == "_?_:_":
		return p(args[0]) + " ? " + p(args[1]) + " : " + p(args[2])
	case name == "_[_]":
		return p(args[0]) + "[" + args[1] + "]"
	case name == "_[?_]":
		return p(args[0]) + "[?" + args[1] + "]"
	case name == "sortBy":
		return p(args[0]) + ".sortBy(x, " + strings.Trim(args[1], "[]") + ")"
	case member:
		return p(args[0]) + "." + name + "(" + strings.Join(args[1:], ", ") + ")"
	}
	return name + "(" + strings.Join(args, ", ") + ")"
}

// checkCorpus returns the sources the checker and cel-go must agree on: every
// overload called with fitting arguments; the first overload of each name,
// style and arity also with each argument in turn replaced by each sample;
// and then what calls cannot show.
func checkCorpus() []string {
	var out []string
	varied := map[string]bool{}
	for _, o := range overloads {
		args := make([]string, len(o.Params))
		for i, p := range o.Params {
			args[i] = sampleOf(p)
		}
		out = append(out, callSource(o.Name, o.Member, args))
		group := fmt.Sprint(o.Name, o.Member, len(args))
		if varied[group] {
			continue
		}
		varied[group] = true
		for i := range args {
			for _, s := range checkSamples {
				if o.Name == "sortBy" && i == 1 {
					s = "[" + s + "]"
				}
				alt := slices.Clone(args)
				alt[i] = s
				out = append(out, callSource(o.Name, o.Member, alt))
			}
		}
	}
	out = append(out, handwrittenSources...)
	slices.Sort(out)
	return slices.Compact(out)
}

var handwrittenSources = []string{
	// Variables, selection, has and type names.
	"input", "inpt", "inputs", "steps", "step", "execution", "executions", "exec", "x", "xs", "in", "im", "it",
	"steps.a.output.b", "execution.started_on", "steps['a']", "steps[1]", "execution.id.size()",
	"input.a.b.c", "input['a'][0]", "inpt.a.b", "has(input.a)", "has(input.a.b)", "has(steps.a)", "has({'a': 1}.a)",
	"has({1: 1}.a)", "has([1].a)", "1.a", "'a'.a", "null.a", "[1].a", "{'a': 1}.a", "{'a': 1}.b.c", "{1: 2}.a",
	"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "optional_type",
	"dyn", "google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.Foo", "google.protobuf",
	"int.a", "type(int)", "type(type)", "type(1) == int", "type(1) == string", "type(input) == list", "type([1]) == map",
	"type(optional.of(1))", "type(null) == null_type", "int == uint", "optional_type == type(optional.none())",
	// Namespaces and misspellings.
	"math", "math.abs", "math.abs(1)", "math.abss(1)", "math.gretest(1, 2)", "math.greatest", "optional.none",
	"optional.of", "optional.non()", "optionl.of(1)", "base64.encod(b'a')", "base64", "strings.quote('a')",
	"strings.quot('a')", "lists.range(3)", "lists.rang(3)", "json.encode(1)", "yaml.parse('a', int)",
	"size", "sise([1])", "sizee([1])", "lowerascii('a')", "'a'.lowerascii()", "'a'.startWith('a')",
	"exist", "exists", "filter", "all", "has", "cel", "cel.bind", "cel.bnd(x, 1, x)", "int(x)", "xyzzy(1)",
	"input.math.abs(1)", "input.size()", "steps.size()", "steps.a.size()", "[1].map(math, math.abs(1))",
	"[1].map(x, x.abs(1))", "_in_(1, [1])", "__not_strictly_false__(true)",
	// Literals of mixed types.
	"[1, 2u]", "[1, 1.5, 'a']", "[null, 1]", "[1, null]", "[input, 1]", "[1, input]", "[[1], ['a']]", "[[1], []]",
	"[[], [1]]", "[{}, {'a': 1}]", "[{'a': 1}, {'a': 'b'}]", "{'a': 1, 'b': 'c'}", "{'a': 1, 2: 3}",
	"{'a': input, 'b': 1}", "{input: 1}", "{[1]: 1}", "[optional.none(), optional.of(1)]", "[timestamp(0), null]",
	"[duration('1s'), null]", "[type(1), int]", "[int, list]", "[[1], input]", "[[input], [1]]",
	"[1, 2] + ['a']", "[1] + [input]", "[input] + [1]", "[] + [1]", "[1] + []", "{} == {'a': 1}", "[] == [1]",
	"[1] == ['a']", "{'a': 1} == {'a': 'b'}", "[[1]] + [['a']]", "[1][0] + 1", "[1, 'a'][0] + 1",
	"{'a': [1]}['a'][0]", "steps.a.output.b + 1", "input + 'a'", "input * input", "-input", "!input",
	"1 == 1u", "1 == 1.0", "1 == 'a'", "1 != null", "null == null", "input == null", "[1] == null",
	"timestamp(0) == null", "optional.of(1) == null", "1 < 1u", "1.5 >= 1", "1u > 2.0", "'a' < 1", "true < false",
	"1 in [1]", "1 in ['a']", "'a' in {'a': 1}", "1 in {'a': 1}", "input in [1]", "1 in input", "1 in 1",
	"true ? 1 : 'a'", "true ? 1 : null", "true ? null : 1", "true ? [1] : []", "true ? [] : [1]", "true ? input : 1",
	"input ? 1 : 2", "1 ? 1 : 2", "true ? optional.of(1) : optional.none()", "true ? {} : {'a': 1}",
	"true && input", "input || false", "1 && true", "true || 'a'", "!1", "-'a'", "--1", "!!true",
	// Macros.
	"[1].all(x, x > 0)", "[1].all(x, x)", "[1].all(x, input)", "input.all(x, x)", "steps.all(k, k == 'a')",
	"{'a': 1}.exists(k, k == 'a')", "{'a': 1}.exists(k, k == 1)", "1.exists(x, true)", "'a'.all(x, true)",
	"[1].exists_one(x, x == 1)", "[1].exists_one(x, 1)", "[1].map(x, x + 1)", "[1].map(x, 'a')",
	"[1].map(x, x > 0, x * 2)", "[1].map(x, 1, x)", "[1].filter(x, x > 0)", "[1].filter(x, 1)",
	"{'a': 1}.map(k, k + 'b')", "{'a': 1}.filter(k, k > 1)", "input.map(x, x.y)", "input.filter(x, x)",
	"[1].map(x, [x]).map(y, y[0])", "[[1]].map(x, x.map(y, y + 1))", "[1].map(x, y)", "[1].map(x, x).size()",
	"[1].all(x, [1].exists(y, y == x))", "[1].map(x, x)[0] + 1", "[].map(x, x)", "[].map(x, x)[0] + 1",
	"{}.map(k, k)", "[1].all(input, input > 0)", "[1].all(steps, steps > 0)", "[1].exists(x, x.y)",
	"[1].all(x)", "[1].all(1, true)", "[1].map(x)", "[1].filter(x, x > 0, x)", "[1].exists_one(x)",
	"cel.bind(x, 1, x + 1)", "cel.bind(x, 'a', x + 1)", "cel.bind(x, [1], x.map(y, y * 2))",
	"cel.bind(x, input, x.y)", "cel.bind(x, 1, cel.bind(y, 2, x + y))", "cel.bind(input, 1, input + 1)",
	"cel.bind(x, 1)", "cel.bind(x, optional.none(), x.orValue(1))",
	"optional.of(1).optMap(x, x + 1)", "optional.of(1).optMap(x, 'a')", "optional.none().optMap(x, x)",
	"1.optMap(x, x)", "input.optMap(x, x)", "optional.of(1).optFlatMap(x, optional.of(x))",
	"optional.of(1).optFlatMap(x, x)", "optional.of(1).optFlatMap(x, input)", "input.optFlatMap(x, x)",
	"optional.of(1).optFlatMap(x, optional.none())",
	"math.greatest(1)", "math.greatest()", "math.greatest('a')", "math.greatest([])", "math.greatest([1, 2])",
	"math.greatest([1, 'a'])", "math.greatest(1, 2)", "math.greatest(1, 2.0)", "math.greatest(1u, 2)",
	"math.greatest(1, 2, 3)", "math.greatest(1, 2.0, 3u)", "math.greatest(1, 'a')", "math.greatest(input)",
	"math.greatest(input, 1)", "math.greatest(input, input, input)", "math.least(1, 2.0, 3)", "math.least([1.5])",
	"math.least(input.a, [1].size())", "math.least(1, true == true)", "math.least({})", "math.greatest(null)",
	"math.greatest(1, 2, 'a'.size())", "math.greatest([input])", "math.least([1u, 2u])",
	"[3, 1].sortBy(x, x)", "[3, 1].sortBy(x, -x)", "['a'].sortBy(x, x.size())", "[1].sortBy(x, [x])",
	"[1].sortBy(x, input)", "input.sortBy(x, x.y)", "1.sortBy(x, x)", "{'a': 1}.sortBy(k, k)", "[1].sortBy(1, 2)",
	"[1].sortBy(x, y)", "[1].sortBy(x, x, x)", "[[1]].sortBy(x, x)", "[1].map(x, x).sortBy(y, y)",
	// Optional syntax.
	"input.?a", "input.?a.b", "input.?a.?b", "steps.?a", "{'a': 1}.?a", "{1: 1}.?a", "1.?a", "[1].?a",
	"optional.of({'a': 1}).?a", "optional.of(1).?a", "input[?0]", "[1][?0]", "[1][?'a']", "{'a': 1}[?'a']",
	"{'a': 1}[?1]", "optional.of([1])[?0]", "optional.of([1])[0]", "optional.of({'a': 1})['a']",
	"optional.of(1)[0]", "[?optional.of(1)]", "[?1]", "[?input]", "[1, ?optional.of('a')]", "[?optional.none()]",
	"{?'a': optional.of(1)}", "{?'a': 1}", "{?'a': input}", "{'b': 2, ?'a': optional.of(1)}",
	"input.?a.orValue(1)", "input.?a.value()", "input.?a.hasValue()", "optional.of(1).or(optional.of(2))",
	"optional.of(1).or(optional.of('a'))", "optional.of(1).orValue('a')", "optional.of(1).hasValue(1)",
	"optional.of(1).hasValue('a')", "optional.ofNonZeroValue(0)", "optional.unwrap([optional.of(1)])",
	"[optional.of(1)].unwrapOpt()", "optional.of(optional.of(1)).value().value()", "input.?a.b.c",
	"optional.of(null)", "optional.none().value() + 1", "optional.none() == optional.of(1)",
	// Literal format strings with literal lists of arguments.
	"'%d'.format(['a'])", "'%s %s'.format([1])", "'%.2f'.format([1.5])", "'%x'.format([true])", "'%o'.format([1.5])",
	"'%b'.format(['a'])", "'%b'.format([true])", "'%e'.format([input])", "'%s'.format([optional.of(1)])",
	"'%s'.format([[optional.of(1)]])", "'%s'.format([{'a': optional.none()}])", "'%s'.format([{optional.none(): 1}])",
	"'%q'.format([1])", "'%'.format([1])", "'%.'.format([1])", "'%.f'.format([1.5])", "'%.200f'.format([1.5])",
	"'%.100f'.format([1.5])", "'%%'.format([])", "'%%'.format([1])", "'%s'.format(input)", "input.format([1])",
	"'%d %d'.format([1, 'a'])", "'%s'.format([null])", "'%s'.format([int])", "'%x'.format([b'a'])",
	"'%X'.format(['a'])", "'%d'.format([1u])", "'%f'.format([timestamp(0)])", "[1].map(x, '%d'.format([x]))",
	"'%d'.format([[1].map(x, x)[0]])", "'%d'.format([[][0]])", "'%s and %d'.format(['a', 'b'])", "'a'.format([])",
	"'%s'.format([1, 2])", "'%d'.format([1]) + 1", "'%d'.format(['a']) + 1", "'%s'.format([duration('1s')])",
	// Workflow-like expressions.
	"input.?a.optMap(x, x + 1)", "[1, 2].map(x, x).filter(y, y > 1).exists(z, z == 2)",
	"{'a': [1]}.all(k, {'a': [1]}[k].all(v, v > 0))", "cel.bind(f, optional.none(), f.orValue([]) + [1])",
	"[[1, 2], [3]].map(l, l.map(x, x * 2)).flatten()", "input.items.map(i, i.price * i.qty).sum()",
	"math.greatest(input.a, input.b)", "lists.range(3).sortBy(x, -x)", "'abc'.charAt(1) + 'x'.repeat(2)",
	"timestamp('2024-01-01T00:00:00Z').getHours('Europe/Berlin')", "duration('1h').getMinutes()",
	"[1, 2, 3].slice(0, 2).reverse().distinct()", "json.parse('{}').orValue({}).a", "yaml.parse('a: 1', map)",
	"json.parse('1', list).value()[0]", "optional.of(1).optMap(x, x).optFlatMap(y, optional.of(y))",
	"[optional.of(1), optional.none()].unwrapOpt()", "input.?a[?0].orValue(0)", "steps.?lookup.output.orValue(null)",
	"execution.started_on + duration('24h') < timestamp('2030-01-01T00:00:00Z')", "input.tags.join(', ')",
	"input.items.filter(i, i.sku.startsWith('A')).size() > 0", "'%s owes %.2f'.format([input.name, input.amount])",
	"input.customer.email.split('@')[1].lowerAscii()", "has(input.customer) && input.customer.name != ''",
	"int(input.amount) / 2 + 1u", "double(input.count) * 1.5", "string(input.amount) + '€'", "bytes('a') + b'b'",
	"input.items.exists_one(i, i.qty == 1.0) ? 'one' : 'many'", "[input.a, input.b].all(x, x != null)",
	"dyn(1) + 1.5", "dyn([1]) + ['a']", "type(input) == map ? input.size() : 0", "input in [1, 'a']",
	// Names from the root, past the macros' variables.
	".input", ".int", ".inpt", "[1].map(input, .input)", "[1].map(x, .x)", ".google.protobuf.Timestamp",
	"[1].map(google, .google.protobuf.Duration)", ".input.a", ".steps.a.output",
	// Errors in several places: the first in the source counts.
	"inpt + 'a'.size(1)", "'a'.size(1) + inpt", "[1, 2].map(x, y) + z", "1 + 'a' + 2u + b'a'",
	"input.a(1) + xyz", "true && 1 && 'a'", "cel.bind(x, 1, x + 'a') + cel.bind(y, 'a', y + 1)",
	// Type parameters bound across a whole expression.
	"[].map(x, x) + [1]", "[1] + [].map(x, x)", "([].map(x, x) + [1])[0] + 1", "[[]][0] + ['a']",
	"{}['a'] + 1", "[{}][0]['a']", "[][0] == 1 && [][0] == 'a'", "cel.bind(e, [], e + [1] + ['a'])",
	"cel.bind(e, [], [e + [1], e + ['a']])", "type([]) == type([1])", "[].exists(x, x == 1)",
	"optional.none().orValue(1) + 1", "optional.none().orValue(1) + 'a'", "[optional.none(), optional.of('a')][0].value()",
}

// TestCheckAgreesWithCelGo checks that the checker accepts what cel-go
// accepts, and gives it the same type, over a corpus of expressions; and
// that it reports the errors cel-go reports where they report them, but
// for the names of functions cel-go declares for its macros and shows.
func TestCheckAgreesWithCelGo(t *testing.T) {
	ours := strings.NewReplacer("math.@max", "math.greatest", "math.@min", "math.least", "@sortByAssociatedKeys", "sortBy")
	env := referenceEnv(t, DefaultMaxNesting)
	srcs := checkCorpus()
	var agreed int
	var skipped []string
	for _, src := range srcs {
		root, perr := parse(src, DefaultMaxNesting)
		if perr != nil {
			skipped = append(skipped, src)
			continue
		}
		want, iss := env.Compile(src)
		got, cerr := check(root, src)
		switch {
		case iss.Err() == nil && cerr != nil:
			t.Errorf("check(%q): %v; cel-go: %s", src, cerr, want.OutputType())
		case iss.Err() != nil && cerr == nil:
			t.Errorf("check(%q) = %s; cel-go: %v", src, got, iss.Err())
		case iss.Err() == nil && got.String() != want.OutputType().String():
			t.Errorf("check(%q) = %s; cel-go: %s", src, got, want.OutputType())
		case cerr != nil && !strings.Contains(ours.Replace(iss.Err().Error()), fmt.Sprintf(":%d:%d: %s\n", cerr.Line, cerr.Column, cerr.Message)) &&
			// Where cel-go names a type parameter, which is of its own
			// making, the checker says dyn. And the parser is to report
			// macros with arguments it cannot take.
			!strings.Contains(iss.Err().Error(), "_var") && src != "[1].all(1, true)":
			t.Errorf("check(%q): %v; cel-go: %v", src, cerr, iss.Err())
		default:
			agreed++
		}
	}
	t.Logf("%d sources, %d agree, %d the parser rejects: %q", len(srcs), agreed, len(skipped), skipped)
}

// FuzzCheckAgreesWithCelGo checks that on any expression cel-go parses the
// checker does not panic, and agrees with cel-go on whether the expression
// is well typed and on its type.
func FuzzCheckAgreesWithCelGo(f *testing.F) {
	for _, src := range handwrittenSources {
		f.Add(src)
	}
	env := referenceEnv(f, DefaultMaxNesting)
	f.Fuzz(func(t *testing.T, src string) {
		root, perr := parse(src, DefaultMaxNesting)
		if perr != nil || len(src) > DefaultMaxLength {
			return
		}
		// What cel-go's parser rejects, with its limits and macros, is the
		// parser's to reject.
		if _, iss := env.Parse(src); iss.Err() != nil {
			return
		}
		want, iss := env.Compile(src)
		got, cerr := check(root, src)
		switch {
		case (iss.Err() == nil) != (cerr == nil):
			t.Errorf("check(%q): %s %v; cel-go: %v", src, got, cerr, iss.Err())
		case cerr == nil && got.String() != want.OutputType().String():
			t.Errorf("check(%q) = %s; cel-go: %s", src, got, want.OutputType())
		}
	})
}

// TestCheckRewritesNamespacedCalls checks that a call on a namespace
// becomes a global call, and a call on a value stays receiver-style.
func TestCheckRewritesNamespacedCalls(t *testing.T) {
	tests := []struct {
		src, fn string
		global  bool
	}{
		{"math.abs(-1)", "math.abs", true},
		{"math.greatest(1, 2, 3)", "math.greatest", true},
		{"optional.of(1)", "optional.of", true},
		{"base64.encode(b'a')", "base64.encode", true},
		{"lists.range(2)", "lists.range", true},
		{"strings.quote('a')", "strings.quote", true},
		// As cel-go does, a declared namespaced function wins over a
		// variable of the namespace's name.
		{"[1].map(math, math.abs(1))[0]", "math.abs", true},
		{"input.size()", "size", false},
		{"'a'.upperAscii()", "upperAscii", false},
	}
	for _, tt := range tests {
		root := testTree(t, tt.src)
		if _, err := check(root, tt.src); err != nil {
			t.Errorf("check(%q): %v", tt.src, err)
			continue
		}
		var found *call
		var visit func(e exprNode)
		visit = func(e exprNode) {
			switch n := e.(type) {
			case *call:
				if n.Func == tt.fn {
					found = n
				}
				for _, a := range append([]exprNode{n.Target}, n.Args...) {
					visit(a)
				}
			case *macro:
				visit(n.Range)
				visit(n.Body)
			}
		}
		visit(root)
		if found == nil {
			t.Errorf("check(%q) left no call of %s", tt.src, tt.fn)
			continue
		}
		if got := found.Target == nil; got != tt.global {
			t.Errorf("check(%q): call of %s global = %v, want %v", tt.src, tt.fn, got, tt.global)
		}
		// A checked tree checks again to the same type.
		if _, err := check(root, tt.src); err != nil {
			t.Errorf("check(%q) again: %v", tt.src, err)
		}
	}
}

// BenchmarkCheck compares the checker with cel-go's on a typical
// condition, each checking a tree parsed beforehand.
func BenchmarkCheck(b *testing.B) {
	const src = "input.amount > 1000 && input.items.all(i, i.qty > 0) && input.customer.email.endsWith('@example.com')"
	b.Run("ours", func(b *testing.B) {
		root := testTree(b, src)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := check(root, src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cel-go", func(b *testing.B) {
		env := referenceEnv(b, DefaultMaxNesting)
		parsed, iss := env.Parse(src)
		if iss.Err() != nil {
			b.Fatal(iss.Err())
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, iss := env.Check(parsed); iss.Err() != nil {
				b.Fatal(iss.Err())
			}
		}
	})
}

// BenchmarkParseSignatures measures what reading the table of functions
// adds to a cold start.
func BenchmarkParseSignatures(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if got := parseSignatures(signatureTable); len(got) != len(overloads) {
			b.Fatalf("parsed %d overloads, want %d", len(got), len(overloads))
		}
	}
}
