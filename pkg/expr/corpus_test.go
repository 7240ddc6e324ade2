package expr

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The corpus test evaluates a fixed set of programs, written by hand and
// generated from fixed seeds, and compares every result, or error message,
// with the one recorded in testdata/corpus.json: any change of the
// language as NewEnv configures it shows as a changed line there.
//
//	go test ./pkg/expr -run TestCorpus -update   rewrites the file

var update = flag.Bool("update", false, "rewrite testdata/corpus.json with the current results")

const goldenFile = "testdata/corpus.json"

// generated is how many generated programs the corpus holds.
const generated = 4000

// programs are the corpus's sources: the hand-written ones, then the
// generated ones by seed, each source once.
func programs() []string {
	srcs := slices.Clone(corpus)
	for seed := range uint64(generated) {
		srcs = append(srcs, generate(seed))
	}
	seen := make(map[string]bool, len(srcs))
	return slices.DeleteFunc(srcs, func(src string) bool {
		dup := seen[src]
		seen[src] = true
		return dup
	})
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	srcs := programs()
	if testing.Short() && !*update {
		srcs = srcs[:len(corpus)+100]
	}
	env := newEnv(t, WithCacheSize(0))
	vars := order()
	lines := make([]string, len(srcs))
	for i, src := range srcs {
		lines[i] = corpusEntry(env, src, vars)
	}
	got := renderCorpus(t, vars, lines)
	if *update {
		if err := os.WriteFile(goldenFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v; go test ./pkg/expr -run TestCorpus -update writes it", err)
	}
	gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	if !testing.Short() && len(gotLines) != len(wantLines) {
		t.Errorf("%s has %d lines, the corpus gives %d", goldenFile, len(wantLines), len(gotLines))
	}
	changed := 0
	for i := range min(len(gotLines), len(wantLines)) {
		if testing.Short() && strings.HasPrefix(gotLines[i], "]") {
			break
		}
		// Cut short, the corpus ends on a line the full one follows with a comma.
		if g, w := gotLines[i], wantLines[i]; g != w && (!testing.Short() || g+"," != w) {
			if changed++; changed <= 20 {
				t.Errorf("line %d changed:\n got  %s\n want %s", i+1, gotLines[i], wantLines[i])
			}
		}
	}
	if changed > 0 {
		t.Errorf("%d results changed; if that is intended, go test ./pkg/expr -run TestCorpus -update", changed)
	}
}

// corpusEntry is the line of one program: its source, the name of its
// input and its result or error.
func corpusEntry(env *Env, src string, vars Vars) string {
	var b strings.Builder
	b.WriteString(`{"source": `)
	b.WriteString(goldenJSON(src))
	b.WriteString(`, "input": "order", `)
	val, err := func() (any, error) {
		p, err := env.Compile(src)
		if err != nil {
			return nil, err
		}
		return p.Eval(context.Background(), vars)
	}()
	if err != nil {
		b.WriteString(`"error": `)
		b.WriteString(goldenJSON(err.Error()))
	} else {
		b.WriteString(`"result": `)
		b.WriteString(goldenJSON(val))
	}
	b.WriteString("}")
	return b.String()
}

// renderCorpus writes the file: the input, then one program a line.
func renderCorpus(t *testing.T, vars Vars, lines []string) []byte {
	t.Helper()
	input, err := json.Marshal(map[string]any{"input": vars.Input, "steps": vars.Steps, "execution": vars.Execution})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	b.WriteString(`"about": "Results of the programs of pkg/expr/corpus_test.go on the input named; doubles are written with a decimal point (3.0) and ints without (3), though Eval's JSON writes both as 3.",` + "\n")
	b.WriteString(`"inputs": {"order": ` + string(input) + "},\n")
	b.WriteString(`"programs": [` + "\n")
	for i, line := range lines {
		b.WriteString(line)
		if i < len(lines)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n}\n")
	return b.Bytes()
}

// goldenJSON writes a result of Eval as JSON with sorted keys, and
// doubles with a decimal point so that a result that changes between int
// and double shows.
func goldenJSON(v any) string {
	switch v := v.(type) {
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case []any:
		parts := make([]string, len(v))
		for i, item := range v {
			parts[i] = goldenJSON(item)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = goldenJSON(k) + ": " + goldenJSON(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return strconv.Quote(err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// corpus covers every operator, macro and function of the language with
// arguments of right and wrong types.
var corpus = []string{
	// Literals.
	`0`, `-1`, `9223372036854775807`, `-9223372036854775808`, `9223372036854775808`, `0x1F`, `-0x10`,
	`1u`, `0u`, `18446744073709551615u`, `18446744073709551616u`, `0x10u`,
	`1.5`, `-0.0`, `1e3`, `1.5e-3`, `.5`, `1.`, `1e`, `0x`,
	`'a'`, `"b"`, `'''c'd'''`, `"""e"f"""`, `r'\n'`, `'\n\t\\\'\"'`, `'\x41\u00e9\U0001F600\101'`, `'\z'`, `'é' == '\u00e9'`,
	`b'hi'`, `b'\xff\x00'`, `b'é'`, `true`, `false`, `null`,
	`[]`, `[1, 'a', 2.5, null]`, `{}`, `{'a': 1, 'b': [2]}`, `{1: 'x', true: 'y', 2u: 'z'}`, `{'a': 1, 'a': 2}`, `{[1]: 2}`, `{1.5: 2}`,
	// Variables and selection.
	`input`, `steps`, `execution`, `input.id`, `input.customer.name`, `input['customer']['email']`, `input.missing`,
	`steps.lookup.output.name`, `steps['lookup'].output`, `steps.review`, `execution.id`, `execution.started_on`,
	`inpt`, `input.items[0]`, `input.items[-1]`, `input.items[2]`, `input.items[1u]`, `input.items[1.0]`, `input.items[1.5]`, `input.items['0']`,
	`input.tags[0].size()`, `input.id[0]`, `{'a': 1}.a`, `{'a': 1}.b`, `{1: 2}[1]`, `{1: 2}[1u]`, `{1: 2}[1.0]`, `[1, 2][true]`,
	// Arithmetic.
	`1 + 2`, `1 - 2`, `2 * 3`, `7 / 2`, `-7 / 2`, `7 % 3`, `-7 % 3`, `7 / 0`, `7 % 0`, `1.0 / 0.0`, `-1.0 / 0.0`, `0.0 / 0.0`,
	`9223372036854775807 + 1`, `-9223372036854775808 - 1`, `-9223372036854775808 / -1`, `-9223372036854775808 % -1`, `-(-9223372036854775808)`,
	`4611686018427387904 * 2`, `1u + 2u`, `1u - 2u`, `18446744073709551615u + 1u`, `5u / 0u`, `5u % 2u`, `-1u`,
	`1.5 + 2.5`, `1.5 * 2.0`, `7.5 % 2.0`, `1 + 1.0`, `1 + 1u`, `'a' + 'b'`, `b'a' + b'b'`, `[1] + [2]`, `[1] + ['a']`, `'x' + 1`,
	`input.amount * 2`, `input.amount * 2.0`, `input.count * 2`, `input.n * 2`, `input.amount + input.count`, `-input.amount`, `-input.id`,
	`{'a': 1} + {'b': 2}`, `null + 1`, `true + true`,
	// Comparison and equality.
	`1 == 1`, `1 == 1.0`, `1 == 1u`, `1u == 1.0`, `1 != 2`, `1 < 2.5`, `2.5 < 1`, `1u < 2`, `-1 < 1u`, `1 < 'a'`, `'a' < 'b'`, `'a' < 'B'`,
	`b'a' < b'b'`, `true < false`, `false < true`, `null == null`, `null != 1`, `[1, 2] == [1, 2]`, `[1] == [1.0]`, `[1] == ['a']`,
	`{'a': 1} == {'a': 1}`, `{'a': 1} == {'a': 1.0}`, `{'a': 1} == {'b': 1}`, `input.amount == 1500`, `input.amount > 1000`,
	`input.note == null`, `input.customer == {'name': 'Ada', 'email': 'ada@example.com'}`, `input.tags == ['urgent', 'eu']`,
	`1 == 'a'`, `dyn(1) == 'a'`, `input.id == 1`, `[1] < [2]`, `{} < {}`, `null < null`,
	`0.0 / 0.0 == 0.0 / 0.0`, `0.0 / 0.0 != 0.0 / 0.0`, `-0.0 == 0.0`, `9007199254740993 == 9007199254740992.0`, `9223372036854775807 < 9223372036854775808.0`,
	`duration('1h') > duration('30m')`, `timestamp('2024-01-01T00:00:00Z') < execution.started_on`,
	// Logic and the ternary.
	`true && false`, `true || false`, `!true`, `!!false`, `!1`, `true && 1`, `1 || true`, `false && input.missing`, `input.missing && false`,
	`true || input.missing`, `input.missing || true`, `input.missing || false`, `1 / 0 == 1 || true`, `true ? 1 : 2`, `false ? 1 : 'a'`,
	`1 ? 2 : 3`, `input.missing ? 1 : 2`, `input.amount > 1 ? 'big' : 'small'`, `true ? input.missing : 1`, `false ? input.missing : 1`,
	// in.
	`1 in [1, 2]`, `1.0 in [1, 2]`, `'a' in ['a']`, `'a' in {'a': 1}`, `'b' in {'a': 1}`, `1 in {1: 'x'}`, `1u in {1: 'x'}`, `'eu' in input.tags`,
	`'name' in input.customer`, `1 in 'abc'`, `'a' in 'abc'`, `null in [null]`,
	// has and optionals.
	`has(input.id)`, `has(input.missing)`, `has(input.customer.name)`, `has(input.customer.missing)`, `has(steps.lookup)`, `has(input)`,
	`has(input.items[0].sku)`, `has({'a': 1}.a)`, `has(1.a)`, `has(input.id.x)`, `has(input.missing.x)`,
	`input.?discount`, `input.?discount.orValue(1.5)`, `input.?id.orValue('x')`, `input.?id.value()`, `input.?missing.value()`,
	`input.?id.hasValue()`, `input.?missing.hasValue()`, `optional.of(1)`, `optional.none()`, `optional.none().orValue(2)`,
	`optional.of(1).or(optional.of(2))`, `optional.none().or(optional.of(2)).value()`, `optional.ofNonZeroValue(0).hasValue()`,
	`optional.ofNonZeroValue('a').value()`, `input.tags[?0]`, `input.tags[?5].orValue('none')`, `{'a': 1}[?'a']`, `{'a': 1}[?'b'].hasValue()`,
	`[1, ?optional.none(), ?optional.of(3)]`, `{'a': 1, ?'b': optional.none(), ?'c': optional.of(2)}`, `input.?customer.?name`,
	`input.?customer.name`, `optional.of(2).optMap(x, x * 2)`, `optional.none().optMap(x, x * 2).hasValue()`,
	`optional.of(2).optFlatMap(x, optional.of(x + 1))`, `optional.of(1) == optional.of(1)`, `optional.of(1).value() + 1`,
	// Macros.
	`[1, 2, 3].all(x, x > 0)`, `[1, 2, 3].all(x, x > 1)`, `[1, 2, 3].exists(x, x > 2)`, `[].exists(x, x > 2)`, `[1, 2, 3].exists_one(x, x > 1)`,
	`[1, 2, 3].exists_one(x, x > 2)`, `[1, 2, 3].map(x, x * 2)`, `[1, 2, 3].map(x, x > 1, x * 10)`, `[1, 2, 3].filter(x, x % 2 == 1)`,
	`{'a': 1, 'b': 2}.map(k, k).sort()`, `{'a': 1, 'b': 2}.filter(k, k == 'a')`, `{'a': 1}.all(k, k == 'a')`, `input.customer.exists(k, k == 'email')`,
	`[0, 1].exists(x, 1 / x > 0)`, `[0, 1].all(x, 1 / x > 0)`, `[1, 0].all(x, 1 / x > 0)`, `[1, 'a'].exists(x, x == 'a')`, `[1, 2].all(x, x)`,
	`input.items.map(i, i.qty * i.price)`, `input.items.filter(i, i.price > 50.0).map(i, i.sku)`, `[1, 2].map(x, [1, 2].map(y, x + y))`,
	`[1, 2].map(x, x, x)`, `1.all(x, true)`, `[1].all(1, true)`, `[1].map(x)`, `[1].exists(x, x.y)`, `x`, `[1].map(x, x) + [x]`,
	`cel.bind(x, 2, x * x)`, `cel.bind(x, input.tags, x.size() + x.size())`, `cel.bind(x, 1, cel.bind(y, 2, x + y))`, `cel.bind(1, 2, 3)`,
	`[[1, 2], [3]].map(l, l.map(x, x + 1))`, `[1, 2, 3].map(x, x).filter(x, x > 1).exists(x, x == 3)`,
	// Names from the root scope.
	`.input.id`, `.dyn(0)`, `.size([1])`, `.math.abs(-1)`, `.optional.of(1).value()`, `[1].map(input, .input)`, `.nosuch(1)`,
	// Strings with bytes that are not UTF-8 read as U+FFFD.
	"'a\xffb'", "b'\xff'.size() + b'\xfe'.size()", "r'\xc3'",
	// Types and conversions.
	`type(1)`, `type(1u)`, `type(1.0)`, `type('a')`, `type(b'a')`, `type(true)`, `type(null)`, `type([])`, `type({})`, `type(type(1))`,
	`type(input.amount)`, `type(execution.started_on)`, `type(duration('1s'))`, `type(optional.none())`, `type(1) == int`, `type('a') == string`,
	`int`, `uint`, `double`, `string`, `bytes`, `bool`, `list`, `map`, `null_type`, `type`, `type(1) == type(2)`,
	`int(1.9)`, `int(-1.9)`, `int(1e19)`, `int('42')`, `int('4x')`, `int(1u)`, `int(18446744073709551615u)`, `int(true)`, `int(execution.started_on)`,
	`uint(1)`, `uint(-1)`, `uint(1.5)`, `uint('7')`, `uint(-1.5)`, `double(1)`, `double(1u)`, `double('1.5')`, `double('x')`, `double('NaN') != 0.0`,
	`string(1)`, `string(1u)`, `string(1.5)`, `string(1e21)`, `string(1e-7)`, `string(100.0)`, `string(true)`, `string(b'hi')`, `string(b'\xff')`,
	`string(null)`, `string(duration('1h'))`, `string(execution.started_on)`, `string([1])`, `bytes('hé')`, `bytes(1)`, `bool('true')`, `bool('TRUE')`,
	`bool('t')`, `bool('yes')`, `bool(1)`, `dyn(1) + 1`, `dyn('a') + 1`, `dyn([1])[0]`,
	// Times and durations.
	`duration('1h30m')`, `duration('1.5h')`, `duration('-1s')`, `duration('1d')`, `duration('x')`, `duration('1h') + duration('1m')`,
	`duration('1h') - duration('2h')`, `duration('1h') * 2`, `duration('90m').getHours()`, `duration('90m').getMinutes()`,
	`duration('90s').getSeconds()`, `duration('1500ms').getMilliseconds()`, `timestamp('2024-02-29T12:34:56.789Z')`, `timestamp('2024-13-01T00:00:00Z')`,
	`timestamp('2024-01-01T00:00:00+02:00')`, `timestamp(0)`, `timestamp(1700000000)`, `execution.started_on + duration('1h')`,
	`duration('1h') + execution.started_on`, `execution.started_on - duration('1h')`, `execution.started_on - timestamp('2024-01-01T00:00:00Z')`,
	`execution.started_on + execution.started_on`, `execution.started_on.getFullYear()`, `execution.started_on.getMonth()`,
	`execution.started_on.getDate()`, `execution.started_on.getDayOfMonth()`, `execution.started_on.getDayOfWeek()`,
	`execution.started_on.getDayOfYear()`, `execution.started_on.getHours()`, `execution.started_on.getMinutes()`,
	`execution.started_on.getSeconds()`, `execution.started_on.getMilliseconds()`, `execution.started_on.getHours('Europe/Berlin')`,
	`execution.started_on.getHours('+05:30')`, `execution.started_on.getHours('Mars/Olympus')`, `execution.started_on.getDayOfWeek('America/New_York')`,
	`int(execution.started_on)`, `timestamp('9999-12-31T23:59:59Z') + duration('1s')`, `duration('2562047h')`, `duration('1h') / 2`,
	// Strings.
	`'abc'.size()`, `size('héllo')`, `size(b'hé')`, `size([1, 2])`, `size({'a': 1})`, `size(1)`, `'abc'.contains('b')`, `'abc'.startsWith('ab')`,
	`'abc'.endsWith('bc')`, `'abc'.matches('^a.c$')`, `'abc'.matches('[')`, `matches('abc', 'b')`, `'abc'.contains(1)`,
	`'héllo'.charAt(1)`, `'abc'.charAt(3)`, `'abc'.charAt(4)`, `'abc'.indexOf('c')`, `'héllo'.indexOf('l')`, `'abc'.indexOf('')`, `'abc'.indexOf('x')`,
	`'abcabc'.indexOf('b', 2)`, `'abc'.indexOf('b', 5)`, `'abcabc'.lastIndexOf('b')`, `'abcabc'.lastIndexOf('b', 3)`, `'abc'.lastIndexOf('')`,
	`'ÀbC'.lowerAscii()`, `'àbc'.upperAscii()`, `'a-b-c'.replace('-', '+')`, `'a-b-c'.replace('-', '+', 1)`, `'aaa'.replace('', 'x')`,
	`'a,b,,c'.split(',')`, `'a,b,c'.split(',', 2)`, `'abc'.split('')`, `'abc'.split(',', 0)`, `'héllo'.substring(1)`, `'héllo'.substring(1, 3)`,
	`'abc'.substring(2, 1)`, `'abc'.substring(4)`, `'  a b \n'.trim()`, `'\u00a0a\u2003'.trim()`, `['a', 'b'].join()`, `['a', 'b'].join('-')`,
	`[1, 2].join('-')`, `[].join(',')`, `strings.quote('a"b\n\\é')`, `strings.quote('\x00\x07')`, `'héllo'.reverse()`, `''.reverse()`,
	`'%s'.format(['a'])`, `'%d'.format([1])`, `'%d'.format([1.5])`, `'%f'.format([1.5])`, `'%.2f'.format([1.0 / 3.0])`, `'%e'.format([1234.5])`,
	`'%x'.format([255])`, `'%X'.format(['hi'])`, `'%o'.format([8])`, `'%b'.format([5])`, `'%s'.format([[1, 'a']])`, `'%s'.format([{'a': 1}])`,
	`'%s %s'.format(['a'])`, `'%%'.format([])`, `'%q'.format(['a'])`, `'%s'.format([null])`, `'%s'.format([1.5])`, `'%s'.format([b'hi'])`,
	`'%s'.format([execution.started_on])`, `'%s'.format([duration('1h')])`, `'%d'.format([1u])`, `'%.3e'.format([0.0])`, `'%f'.format([1e100])`,
	`'%s owes %.2f'.format([input.customer.name, input.amount])`, `'%s'.format([true])`, `'%d'.format(['a'])`, `'%5d'.format([1])`,
	// Math.
	`math.greatest(1, 2)`, `math.greatest(1, 2.5, 2u)`, `math.greatest([1, 5, 3])`, `math.greatest([])`, `math.least(-1, 'a')`, `math.least([1.5, 0.5])`,
	`math.greatest(input.items.map(i, i.price))`, `math.ceil(1.2)`, `math.floor(-1.2)`, `math.round(2.5)`, `math.round(-2.5)`, `math.trunc(-1.7)`,
	`math.abs(-5)`, `math.abs(-9223372036854775808)`, `math.abs(-1.5)`, `math.abs(3u)`, `math.sign(-3)`, `math.sign(0.0)`, `math.sign(5u)`,
	`math.isNaN(0.0 / 0.0)`, `math.isInf(1.0 / 0.0)`, `math.isFinite(1.0)`, `math.bitAnd(6, 3)`, `math.bitOr(6u, 3u)`, `math.bitXor(6, 3)`,
	`math.bitNot(0)`, `math.bitNot(0u)`, `math.bitShiftLeft(1, 62)`, `math.bitShiftLeft(1, 64)`, `math.bitShiftRight(-8, 1)`,
	`math.bitShiftLeft(1, -1)`, `math.sqrt(16)`, `math.sqrt(-1.0)`, `math.sqrt(2u)`, `math.ceil(1)`,
	// Encoders.
	`base64.encode(b'hi')`, `base64.decode('aGk=')`, `base64.decode('aGk')`, `base64.decode('!!')`, `base64.encode('hi')`,
	// Lists.
	`lists.range(3)`, `lists.range(0)`, `lists.range(-1)`, `[3, 1, 2].sort()`, `['b', 'a'].sort()`, `[1, 'a'].sort()`, `[2.5, 1].sort()`,
	`[1, 2, 2, 1.0].distinct()`, `[[1], [1]].distinct()`, `[[1, [2]], 3].flatten()`, `[[1, [2]], 3].flatten(2)`, `[1].flatten(-1)`,
	`[1, 2, 3].reverse()`, `[1, 2, 3, 4].slice(1, 3)`, `[1, 2].slice(2, 1)`, `[1, 2].slice(0, 5)`, `[1, 2, 3].first()`, `[].first()`,
	`[1, 2, 3].last().value()`, `input.items.sortBy(i, i.price).map(i, i.sku)`, `input.items.sortBy(i, -i.price)[0].sku`,
	`[3, 1].sortBy(x, x)`, `['bb', 'a'].sortBy(s, s.size())`, `[{'a': 1}].sort()`, `[true, false].sort()`, `[b'b', b'a'].sort()`,
	// Errors in the middle of values.
	`[1, 1 / 0]`, `{'a': 1 / 0}`, `{'a': 1}['a']`, `[1][0] + input.missing`, `size(input.missing)`, `input.missing.size()`, `input.id.missing`,
	`input.note.x`, `input.count.x`, `[1, 2][2]`, `'abc'[0]`, `{}.a`,
	// Mixed programs from workflows.
	`input.amount > 1000 && steps.lookup.output.name == 'ACME'`, `int(input.amount) * 2`, `input.customer.email.split('@')[1]`,
	`input.id.startsWith('PO-') && input.id.size() == 4`, `{'sku': input.items[0].sku, 'qty': input.items[0].qty}`,
	`input.items.exists(i, i.sku == 'A') ? 'has A' : 'no A'`, `cel.bind(gross, input.amount * 1.2, gross > 1000.0)`,
	`execution.workflow_version == 2`, `'Order ' + input.id + ' for ' + string(input.amount) + ' ' + input.currency`,
}

// generate builds a random program from the seed. Most are well typed:
// each subexpression is drawn for the type its place needs, and about one
// in twelve draws any type instead, so that the checker and run-time
// overload resolution are exercised.
func generate(seed uint64) string {
	g := &generator{rnd: rand.New(rand.NewPCG(seed, 0x5eed))}
	kinds := []string{"int", "uint", "double", "string", "bool", "bytes", "list", "map", "dyn", "timestamp", "duration", "optional"}
	return g.expr(kinds[g.rnd.IntN(len(kinds))], 4)
}

type generator struct {
	rnd  *rand.Rand
	vars []string // macro variables in scope, all of type int
}

func (g *generator) pick(options ...string) string { return options[g.rnd.IntN(len(options))] }

func (g *generator) expr(kind string, depth int) string {
	if depth > 0 && g.rnd.IntN(12) == 0 {
		kind = g.pick("int", "double", "string", "bool", "list", "map", "dyn", "null")
	}
	if depth <= 0 || g.rnd.IntN(4) == 0 {
		return g.atom(kind)
	}
	d := depth - 1
	e := func(k string) string { return g.expr(k, d) }
	switch kind {
	case "int":
		return g.pick(
			e("int")+" "+g.pick("+", "-", "*", "/", "%")+" "+e("int"),
			"-"+e("int"),
			"size("+e(g.pick("string", "list", "map", "bytes"))+")",
			"int("+e(g.pick("double", "uint", "string", "timestamp", "dyn"))+")",
			e("string")+"."+g.pick("indexOf", "lastIndexOf")+"("+e("string")+")",
			"math."+g.pick("abs", "sign", "bitNot")+"("+e("int")+")",
			"math."+g.pick("greatest", "least", "bitAnd", "bitOr", "bitXor", "bitShiftLeft", "bitShiftRight")+"("+e("int")+", "+e("int")+")",
			e("timestamp")+"."+g.pick("getFullYear", "getMonth", "getDayOfYear", "getHours", "getMinutes", "getSeconds", "getDayOfWeek")+"()",
			e("duration")+"."+g.pick("getHours", "getMinutes", "getSeconds", "getMilliseconds")+"()",
			"("+e("bool")+" ? "+e("int")+" : "+e("int")+")",
			g.intList(d)+"["+e("int")+"]",
			"cel.bind(b, "+e("int")+", b * b)",
		)
	case "uint":
		return g.pick(e("uint")+" "+g.pick("+", "-", "*", "/", "%")+" "+e("uint"), "uint("+e(g.pick("int", "double", "string"))+")", "math.abs("+e("uint")+")")
	case "double":
		return g.pick(
			e("double")+" "+g.pick("+", "-", "*", "/")+" "+e("double"),
			"-"+e("double"),
			"double("+e(g.pick("int", "uint", "string", "dyn"))+")",
			"math."+g.pick("ceil", "floor", "round", "trunc", "abs", "sign", "sqrt")+"("+e("double")+")",
			"math."+g.pick("greatest", "least")+"("+e("double")+", "+e(g.pick("int", "double"))+")",
			"("+e("bool")+" ? "+e("double")+" : "+e("double")+")",
		)
	case "string":
		return g.pick(
			e("string")+" + "+e("string"),
			"string("+e(g.pick("int", "uint", "double", "bool", "bytes", "timestamp", "duration", "string"))+")",
			e("string")+"."+g.pick("lowerAscii", "upperAscii", "trim", "reverse")+"()",
			e("string")+".replace("+e("string")+", "+e("string")+")",
			e("string")+".substring("+e("int")+")",
			e("string")+".substring("+e("int")+", "+e("int")+")",
			e("string")+".charAt("+e("int")+")",
			"strings.quote("+e("string")+")",
			e("list")+".join("+e("string")+")",
			"'"+g.pick("%s", "%d", "%f", "%.2f", "%e", "%x", "%o", "%b", "%s-%s")+"'.format(["+e(g.pick("int", "double", "string", "bool", "list", "uint"))+"])",
			"base64.encode("+e("bytes")+")",
			"("+e("bool")+" ? "+e("string")+" : "+e("string")+")",
			e("string")+".split("+e("string")+")["+e("int")+"]",
		)
	case "bool":
		cmp := g.pick("int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration", "list", "map", "null")
		ord := g.pick("int", "uint", "double")
		return g.pick(
			e(cmp)+" "+g.pick("==", "!=")+" "+e(cmp),
			e(cmp)+" "+g.pick("<", "<=", ">", ">=")+" "+e(cmp),
			e(ord)+" "+g.pick("<", "<=", ">", ">=", "==")+" "+e(g.pick("int", "uint", "double")),
			e("bool")+" "+g.pick("&&", "||")+" "+e("bool"),
			"!"+e("bool"),
			e("string")+"."+g.pick("contains", "startsWith", "endsWith", "matches")+"("+e("string")+")",
			e("int")+" in "+g.intList(d),
			e("string")+" in "+e("map"),
			"has("+g.pick("input.id", "input.missing", "input.customer.name", "steps.lookup", "steps.none", "{'a': 1}.a")+")",
			g.intList(d)+"."+g.pick("all", "exists", "exists_one")+"("+g.bind(func() string { return g.expr("bool", d) })+")",
			"math."+g.pick("isNaN", "isInf", "isFinite")+"("+e("double")+")",
			e("optional")+".hasValue()",
		)
	case "bytes":
		return g.pick(e("bytes")+" + "+e("bytes"), "bytes("+e("string")+")", "base64.decode("+e("string")+")")
	case "list":
		return g.pick(
			g.intList(d),
			e("list")+" + "+e("list"),
			"["+e("string")+", "+e("double")+"]",
			e("string")+".split("+e("string")+")",
			g.intList(d)+".map("+g.bind(func() string { return g.expr(g.pick("int", "string", "double"), d) })+")",
			g.intList(d)+".filter("+g.bind(func() string { return g.expr("bool", d) })+")",
			g.intList(d)+"."+g.pick("sort", "distinct", "reverse", "flatten")+"()",
			g.intList(d)+".slice("+e("int")+", "+e("int")+")",
			"lists.range("+g.pick("0", "1", "3", "-1")+")",
			"[["+e("int")+"], ["+e("int")+"]].flatten()",
		)
	case "map":
		return g.pick(
			"{"+e("string")+": "+e("int")+"}",
			"{"+e("int")+": "+e("string")+", "+e("int")+": "+e("double")+"}",
			"{'k': "+e("dyn")+"}",
		)
	case "dyn":
		return g.pick(
			"dyn("+e(g.pick("int", "double", "string", "list"))+")",
			"input."+g.pick("amount", "count", "n", "id", "tags", "items", "customer", "note", "missing"),
			"input.items["+e("int")+"]."+g.pick("sku", "qty", "price"),
			"steps.lookup.output."+g.pick("name", "limit"),
			"execution."+g.pick("id", "workflow_version", "started_on"),
			"input.tags["+e("int")+"]",
			e("dyn")+" + "+e("dyn"),
			e("dyn")+" * "+e(g.pick("int", "double")),
			"input.?"+g.pick("discount", "amount")+".orValue("+e("double")+")",
			"type("+e(g.pick("int", "string", "dyn", "list"))+")",
		)
	case "timestamp":
		return g.pick(e("timestamp")+" "+g.pick("+", "-")+" "+e("duration"), "timestamp("+e(g.pick("string", "int"))+")")
	case "duration":
		return g.pick(e("duration")+" "+g.pick("+", "-")+" "+e("duration"), e("timestamp")+" - "+e("timestamp"), "duration("+e("string")+")")
	case "optional":
		return g.pick(
			"optional.of("+e("int")+")",
			"optional.ofNonZeroValue("+e(g.pick("int", "string", "list"))+")",
			e("optional")+".or("+e("optional")+")",
			"input.?"+g.pick("discount", "amount", "id"),
			g.intList(d)+"[?"+e("int")+"]",
			e("optional")+".optMap(o, o + 1)",
		)
	}
	return g.atom(kind)
}

// bind puts a fresh int variable in scope of body and returns "v, body".
func (g *generator) bind(body func() string) string {
	v := "v" + strconv.Itoa(len(g.vars))
	g.vars = append(g.vars, v)
	b := body()
	g.vars = g.vars[:len(g.vars)-1]
	return v + ", " + b
}

func (g *generator) intList(depth int) string {
	if depth > 0 && g.rnd.IntN(3) == 0 {
		return "[" + g.expr("int", depth-1) + ", " + g.expr("int", depth-1) + "]"
	}
	return g.pick("[1, 2, 3]", "[]", "[5, -2, 5, 0]", "lists.range(4)", "[9223372036854775807, 1]")
}

func (g *generator) atom(kind string) string {
	switch kind {
	case "int":
		if len(g.vars) > 0 && g.rnd.IntN(2) == 0 {
			return g.vars[g.rnd.IntN(len(g.vars))]
		}
		return g.pick("0", "1", "-3", "42", "9223372036854775807", "-9223372036854775808", "0x10", "input.count", "input.n", "size(input.tags)")
	case "uint":
		return g.pick("0u", "1u", "7u", "18446744073709551615u")
	case "double":
		return g.pick("0.0", "1.5", "-2.5e3", "1e300", "input.amount", "input.items[0].price", "steps.lookup.output.limit", "0.1")
	case "string":
		return g.pick(`'a'`, `"EUR"`, `''`, `'héllo wörld'`, `'a,b,c'`, `' x '`, `'%'`, `'Σ'`, "input.currency", "input.id", "input.customer.name",
			"execution.id", `'2024-05-01T08:00:00Z'`, `'1h'`, `'12'`, `'-1.5'`, `'true'`, `'aGk='`, `'[a-c]+'`)
	case "bool":
		return g.pick("true", "false", "input.amount > 1000", "has(input.discount)")
	case "bytes":
		return g.pick("b'hi'", "b''", "b'\\xff'")
	case "list":
		return g.pick("[1, 2, 3]", "[]", "input.tags", "input.items", "['a', 'b']", "[1.5, 2.0]", "[1, 'a']", "[[1], [2, 3]]")
	case "map":
		return g.pick("{'a': 1}", "input.customer", "{}", "{1: 'x'}", "steps")
	case "dyn":
		return g.pick("input.amount", "input.id", "input.tags", "input.note", "input.missing", "steps.lookup.output", "dyn(1)")
	case "timestamp":
		return g.pick("execution.started_on", "timestamp('2024-01-02T03:04:05Z')", "timestamp(0)")
	case "duration":
		return g.pick("duration('1h')", "duration('-90s')", "duration('1.5s')")
	case "optional":
		return g.pick("optional.none()", "optional.of(1)", "input.?discount", "input.?id")
	case "null":
		return "null"
	}
	return "null"
}
