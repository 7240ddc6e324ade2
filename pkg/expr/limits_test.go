package expr

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// maxAlloc bounds what one refused evaluation may allocate. Before the
// guard these programs allocated from hundreds of megabytes to gigabytes;
// with it each allocates at most what the budget (16 MiB) lets it build,
// with room for the allocator. It measures allocation, not time. Under the
// race detector cel-go's cost tracker allocates four bytes per character
// of every string it sizes (raceDetector), which the bound allows for.
var maxAlloc uint64 = 40 << 20

func init() {
	if raceDetector {
		maxAlloc = 120 << 20
	}
}

// allocated returns the bytes allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// attackVars holds a 60 KB string, as in the attacks that were reported,
// and a 900 KB one, under the string cap, whose encodings pass it.
func attackVars() Vars {
	return Vars{Input: map[string]any{
		"s":   strings.Repeat("a", 60_000),
		"big": strings.Repeat("b", 900_000),
		"m":   map[string]any{"k1": "v", "k2": "w"},
	}}
}

func TestBuildingIsBoundedBeforeItHappens(t *testing.T) {
	tests := []struct {
		name, src string
		opts      []Option
		want      string // in the error
	}{
		{"replace", `size(input.s.replace("a", input.s))`, nil,
			"replace would build a string of 3.4 GiB; a string may hold at most 1 MiB"},
		{"replace with a limit", `input.s.replace("a", input.s, 100)`, nil,
			"replace would build a string of 5.8 MiB"},
		{"replace of the empty string", `input.s.replace("", input.s)`, nil,
			"replace would build a string of 3.4 GiB"},
		{"join of a mapped list", `lists.range(20).map(i, input.s).join("")`, nil,
			"join would build a string of 1.1 MiB; a string may hold at most 1 MiB"},
		{"join of a mapped map", `input.m.map(k, input.big).join(",")`, nil,
			"join would build a string of 1.7 MiB"},
		{"join with a long separator", `lists.range(100).map(i, "x").join(input.s)`, nil,
			"join would build a string of 5.7 MiB"},
		{"nested bind doubling", `cel.bind(a, input.s + input.s, cel.bind(b, a + a, cel.bind(c, b + b,
			cel.bind(d, c + c, cel.bind(e, d + d, cel.bind(f, e + e, size(f))))))) `, nil,
			"+ would build a string of 1.8 MiB; a string may hold at most 1 MiB"},
		{"list doubling", `cel.bind(a, lists.range(1000), cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c,
			cel.bind(e, d + d, cel.bind(f, e + e, cel.bind(g, f + f, cel.bind(h, g + g, size(h)))))))))`, nil,
			"+ would build a list of 128000 elements; a list may hold at most 100000"},
		{"bytes doubling", `cel.bind(a, bytes(input.s), cel.bind(b, a + a + a + a + a + a + a + a,
			cel.bind(c, b + b + b, size(c))))`, []Option{WithCostLimit(1 << 40)},
			"+ would build a bytes value of 1.4 MiB"},
		{"lists.range", `size(lists.range(1000000000))`, nil,
			"lists.range would build a list of 1000000000 elements; a list may hold at most 100000"},
		{"flatten", `cel.bind(r, lists.range(1000), lists.range(200).map(i, r).flatten())`, nil,
			"flatten would build a list of more than 100000 elements"},
		{"split into characters", `size(input.big.split(""))`, nil,
			"split would build a list of 900000 elements"},
		{"format of a long list", `"%s".format([lists.range(30).map(i, input.s)])`, nil,
			"format would build a string of more than 1 MiB"},
		{"format of many arguments", `"%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s".format(lists.range(18).map(i, input.s))`, nil,
			"format would build a string of more than 1 MiB"},
		{"format with the widest precision", `"%.100f".format([1e308])`, nil, ""}, // bounded by cel-go
		{"base64 of a large value", `base64.encode(bytes(input.big))`, nil,
			"base64.encode would build a string of 1.1 MiB"},
		{"strings.quote", `strings.quote(input.big)`, nil,
			"strings.quote would build a string of 1.7 MiB"},
		{"json.encode", `json.encode(lists.range(100).map(i, input.s))`, nil,
			"json.encode would build a string of more than 1 MiB"},
		{"yaml.encode", `yaml.encode({"a": lists.range(30).map(i, input.s)})`, nil,
			"yaml.encode would build a string of more than 1 MiB"},
		{"many small strings", `lists.range(400).map(i, input.s + "x").size()`, []Option{WithCostLimit(1 << 40)},
			"+ would bring what this expression builds to more than 16 MiB; an evaluation may build at most 16 MiB"},
	}
	vars := attackVars()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newEnv(t, append(tt.opts, WithCacheSize(0))...).Compile(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			var got error
			n := allocated(func() { _, got = p.Eval(context.Background(), vars) })
			if tt.want == "" {
				if got != nil {
					t.Fatalf("got %v, want a result", got)
				}
			} else if got == nil || !strings.Contains(got.Error(), tt.want) || !errors.Is(got, ErrTooLarge) {
				t.Fatalf("got error %v, want one with %q matching ErrTooLarge", got, tt.want)
			}
			if n > maxAlloc {
				t.Errorf("allocated %s, want at most %s", size(n), size(maxAlloc))
			}
		})
	}
}

func TestTemplatesAreBoundedBeforeTheyAreWritten(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name, src string
		want      string
	}{
		{"strings", strings.Repeat("{{ input.s }},", 20), "line 1, column 239: the template would build a string of more than 1 MiB"},
		{"values as JSON", strings.Repeat("{{ [input.s, input.s] }}", 10), "the template would build a string of more than 1 MiB"},
		{"a placeholder that builds too much", "x {{ input.s.replace('a', input.s) }}", "line 1, column 3: replace would build a string"},
	}
	vars := attackVars()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := env.CompileTemplate(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			var got error
			n := allocated(func() { _, got = tpl.Eval(context.Background(), vars) })
			if got == nil || !strings.Contains(got.Error(), tt.want) || !errors.Is(got, ErrTooLarge) {
				t.Fatalf("got error %v, want one with %q matching ErrTooLarge", got, tt.want)
			}
			if n > maxAlloc {
				t.Errorf("allocated %s, want at most %s", size(n), size(maxAlloc))
			}
		})
	}
}

// The budget belongs to one Eval call: a Value whose strings each build
// below the cap fails once together they pass the budget.
func TestBudgetIsSharedByTheExpressionsOfOneEval(t *testing.T) {
	t.Parallel()
	// A cost limit that lets the budget speak first.
	env := newEnv(t, WithCostLimit(1<<40))
	items := make([]any, 40)
	for i := range items {
		items[i] = "{{ size(input.big + 'x') }}"
	}
	v, err := env.CompileValue(map[string]any{"items": items})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Eval(context.Background(), attackVars())
	if want := "an evaluation may build at most 16 MiB"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error with %q", err, want)
	}
	// A fresh Eval starts with a fresh budget.
	one, err := env.Compile("size(input.big + 'x')")
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := one.Eval(context.Background(), attackVars()); err != nil {
			t.Fatalf("got %v, want a result", err)
		}
	}
}

func TestGuardedCallsKeepTheirResults(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src  string
		want any
	}{
		{`"ab" + "cd"`, "abcd"},
		{`b"ab" + b"cd" == b"abcd"`, true},
		{`[1, 2] + [3]`, []any{int64(1), int64(2), int64(3)}},
		{`input.m.k1 + input.m.k2`, "vw"},
		{`"banana".replace("a", "o")`, "bonono"},
		{`"banana".replace("a", "o", 2)`, "bonona"},
		{`["a", "b"].join("-")`, "a-b"},
		{`["a", "b"].join()`, "ab"},
		{`"%d items for %s".format([3, "Ada"])`, "3 items for Ada"},
		{`"a,b,c".split(",")`, []any{"a", "b", "c"}},
		{`"a,b,c".split(",", 2)`, []any{"a", "b,c"}},
		{`strings.quote("a\nb")`, `"a\nb"`},
		{`base64.encode(b"hi")`, "aGk="},
		{`"Ab".lowerAscii() + "Ab".upperAscii()`, "abAB"},
		{`"abc".reverse()`, "cba"},
		{`[1, 2].reverse()`, []any{int64(2), int64(1)}},
		{`lists.range(3)`, []any{int64(0), int64(1), int64(2)}},
		{`[[1], [2, [3]]].flatten()`, []any{int64(1), int64(2), []any{int64(3)}}},
		{`[[1], [2, [3]]].flatten(2)`, []any{int64(1), int64(2), int64(3)}},
		{`[1, 2, 3].map(x, x * 2)`, []any{int64(2), int64(4), int64(6)}},
		{`input.amount + 1`, 1501.0},
	}
	vars := attackVars()
	vars.Input.(map[string]any)["amount"] = 1500.0
	for _, tt := range tests {
		p, err := env.Compile(tt.src)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		got, err := p.Eval(context.Background(), vars)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.src, got, tt.want)
		}
	}
}

// BenchmarkEvalBuilding evaluates calls the guard sizes before they run.
func BenchmarkEvalBuilding(b *testing.B) {
	env := newEnv(b)
	for _, bc := range []struct{ name, src string }{
		{"concat", "input.customer.name + ' at ' + steps.lookup.output.name"},
		{"join", "input.tags.join(', ')"},
		{"map-join", "input.items.map(i, i.sku).join(',')"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := env.Compile(bc.src)
			if err != nil {
				b.Fatal(err)
			}
			vars := order()
			ctx := context.Background()
			for b.Loop() {
				if _, err := p.Eval(ctx, vars); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// nestedBinds doubles a list of two references to input.s depth times
// with cel.bind, then evaluates body over the last level, l<depth>.
func nestedBinds(depth int, body string) string {
	var b strings.Builder
	prev := "input.s"
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, "cel.bind(l%d, [%s, %s], ", i, prev, prev)
		prev = fmt.Sprintf("l%d", i)
	}
	return b.String() + body + strings.Repeat(")", depth)
}

// A structure built of shared references costs little to build and 2^d
// times its leaves to write out or compare; each is counted as written.
func TestSharedReferencesAreCountedAsWritten(t *testing.T) {
	tests := []struct {
		name, src string
		vars      Vars
		want      string // in the error
	}{
		{"list literals doubling", nestedBinds(14, "l14"), attackVars(),
			"a list would bring what this expression builds to more than 16 MiB"},
		{"map literals doubling", `cel.bind(a, {"x": input.s, "y": input.s}, cel.bind(b, {"x": a, "y": a},
			cel.bind(c, {"x": b, "y": b}, cel.bind(d, {"x": c, "y": c}, cel.bind(e, {"x": d, "y": d},
			cel.bind(f, {"x": e, "y": e}, cel.bind(g, {"x": f, "y": f}, cel.bind(h, {"x": g, "y": g}, h))))))))`, attackVars(),
			"a map would bring what this expression builds to more than 16 MiB"},
		{"concatenation doubling", `cel.bind(a, [input.s] + [input.s], cel.bind(b, a + a, cel.bind(c, b + b,
			cel.bind(d, c + c, cel.bind(e, d + d, cel.bind(f, e + e, cel.bind(g, f + f, cel.bind(h, g + g, h))))))))`, attackVars(),
			"+ would bring what this expression builds to more than 16 MiB"},
		{"map of a shared list", `cel.bind(a, [input.s, input.s, input.s, input.s], lists.range(1000).map(i, a))`, attackVars(),
			"would bring what this expression builds to more than 16 MiB"},
		{"self-comparison", nestedBinds(28, "l28 == l28"), Vars{Input: map[string]any{"s": "x"}},
			"would bring what this expression builds to more than 16 MiB"},
		{"repeated comparison", nestedBinds(6, "lists.range(1000).all(i, l6 == l6)"), attackVars(),
			"== would bring what this expression compares to more than 32 MiB"},
		{"repeated inequality", nestedBinds(6, "lists.range(1000).exists(i, l6 != l6)"), attackVars(),
			"!= would bring what this expression compares to more than 32 MiB"},
		{"membership", nestedBinds(7, "lists.range(1000).all(i, l6 in l7)"), attackVars(),
			"@in would bring what this expression compares to more than 32 MiB"},
		{"distinct", "lists.range(100000).distinct()", attackVars(),
			"distinct would bring what this expression compares to more than 32 MiB"},
		{"a result larger than it was built", `lists.range(100).map(i, input.s)`, attackVars(),
			"the result would be more than 4 MiB as JSON; an expression may yield at most 4 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newEnv(t, WithCostLimit(1<<40), WithCacheSize(0)).Compile(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			var got error
			n := allocated(func() { _, got = p.Eval(context.Background(), tt.vars) })
			if got == nil || !strings.Contains(got.Error(), tt.want) || !errors.Is(got, ErrTooLarge) {
				t.Fatalf("got error %v, want one with %q matching ErrTooLarge", got, tt.want)
			}
			if n > maxAlloc {
				t.Errorf("allocated %s, want at most %s", size(n), size(maxAlloc))
			}
		})
	}
}

// What shared references build within the limits evaluates as before.
func TestSharedReferencesWithinTheLimits(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	vars := Vars{Input: map[string]any{"s": "ab", "items": []any{map[string]any{"id": "x"}, map[string]any{"id": "y"}}}}
	tests := []struct {
		src  string
		want any
	}{
		{nestedBinds(3, "size(l3)"), int64(2)},
		{nestedBinds(3, "l3 == l3"), true},
		{nestedBinds(3, "l2 in l3"), true},
		{nestedBinds(2, "l2"), []any{[]any{"ab", "ab"}, []any{"ab", "ab"}}},
		{`input.items.map(x, {"id": x.id, "all": input.items}).size()`, int64(2)},
		{`[input.items, input.items].distinct().size()`, int64(1)},
	}
	for _, tt := range tests {
		p, err := env.Compile(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Eval(context.Background(), vars)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, %v, want %v", tt.src, got, err, tt.want)
		}
	}
}

// Every evaluation runs under a deadline that cel-go looks at between the
// steps of comprehensions, and under its caller's context.
func TestEvaluationStopsAtItsDeadlineOrCancel(t *testing.T) {
	t.Parallel()
	// Ten billion steps: without the deadline it would run for hours.
	const endless = "lists.range(100000).all(i, lists.range(100000).all(j, i + j >= 0))"
	p, err := newEnv(t, WithCostLimit(1<<62), WithTimeout(time.Millisecond)).Compile(endless)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Eval(context.Background(), Vars{})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "it took longer than 1ms") {
		t.Errorf("got %v, want ErrTimeout", err)
	}

	p, err = newEnv(t, WithCostLimit(1<<62), WithTimeout(time.Hour)).Compile(endless)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := p.Eval(ctx, Vars{})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
