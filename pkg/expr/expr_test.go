package expr

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func newEnv(t testing.TB, opts ...Option) *Env {
	t.Helper()
	env, err := NewEnv(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// order is a purchase request as the trigger's JSON decodes it, with a
// looked-up vendor and a few facts about the execution.
func order() Vars {
	return Vars{
		Input: map[string]any{
			"id":       "PO-1",
			"amount":   1500.0,
			"currency": "EUR",
			"count":    int64(3),
			"n":        7,
			"note":     nil,
			"items": []any{
				map[string]any{"sku": "A", "qty": 2.0, "price": 10.5},
				map[string]any{"sku": "B", "qty": 1.0, "price": 99.0},
			},
			"customer": map[string]any{"name": "Ada", "email": "ada@example.com"},
			"tags":     []any{"urgent", "eu"},
		},
		Steps: map[string]any{
			"lookup": map[string]any{"name": "ACME", "limit": 5000.0},
		},
		Execution: map[string]any{
			"id":               "ex-1",
			"workflow_id":      "wf-1",
			"workflow_version": 2.0,
			"trigger_type":     "REQUEST",
			"started_on":       time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC),
		},
	}
}

func TestEval(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src  string
		want any
	}{
		// JSON numbers are doubles and compare with integer literals.
		{"input.amount > 1000", true},
		{"input.amount == 1500", true},
		{"input.amount >= 1500.0 && input.amount < 1501", true},
		{"input.count < 4", true},
		{"steps.lookup.output.limit > input.amount", true},
		{"input.amount", 1500.0},
		{"input.amount * 2", 3000.0},
		{"int(input.amount) * 2", int64(3000)},
		{"input.n * 2", 14.0},
		{"execution.workflow_version == 2", true},
		// Strings.
		{"input.currency.lowerAscii()", "eur"},
		{"input.id.startsWith('PO-') && input.id.size() == 4", true},
		{"input.customer.email.split('@')[1]", "example.com"},
		{"'%s owes %.2f'.format([input.customer.name, input.amount])", "Ada owes 1500.00"},
		{"input.customer.name + ' at ' + steps.lookup.output.name", "Ada at ACME"},
		{"input.id.matches('^PO-[0-9]+$')", true},
		// Maps and has().
		{"input['currency']", "EUR"},
		{"has(input.customer.email)", true},
		{"has(input.discount)", false},
		{"has(steps.lookup)", true},
		{"has(steps.review)", false},
		{"input.?discount.orValue(0.0)", 0.0},
		{"input.note == null", true},
		{"input.note", nil},
		{"{'sku': input.items[0].sku, 'qty': input.items[0].qty}", map[string]any{"sku": "A", "qty": 2.0}},
		{"{1: 'one'}", map[string]any{"1": "one"}},
		// Lists.
		{"input.items.map(i, i.qty * i.price)", []any{21.0, 99.0}},
		{"input.items.filter(i, i.price > 50).map(i, i.sku)", []any{"B"}},
		{"input.items.exists(i, i.sku == 'A')", true},
		{"input.items.all(i, i.qty > 0)", true},
		{"input.tags.size()", int64(2)},
		{"'eu' in input.tags", true},
		{"[3, 1, 2].sort()", []any{int64(1), int64(2), int64(3)}},
		{"lists.range(3)", []any{int64(0), int64(1), int64(2)}},
		{"math.greatest(input.items.map(i, i.price))", 99.0},
		{"cel.bind(gross, input.amount * 1.2, gross > 1000)", true},
		// Encodings, times and durations.
		{"base64.encode(b'hi')", "aGk="},
		{"b'hi'", "aGk="},
		{"execution.started_on + duration('1h')", "2024-05-01T09:00:00Z"},
		{"execution.started_on.getHours()", int64(8)},
		{"duration('90m')", "1h30m0s"},
		{"type(input.amount)", "double"},
	}
	for _, tt := range tests {
		p, err := env.Compile(tt.src)
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.src, err)
			continue
		}
		got, err := p.Eval(context.Background(), order())
		if err != nil {
			t.Errorf("Eval(%q): %v", tt.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Eval(%q) = %#v, want %#v", tt.src, got, tt.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src, want string
	}{
		{"input.missing", "no such key: missing"},
		{"steps.review.output", "no such key: review"},
		{"size(input.tags) / 0", "division by zero"},
		{"input.id * 2", "no such overload"},
		{"input.amount / 0", "result +Inf is not a number JSON can hold"},
		{"input.items[0].price % 2", "10.5 is not a whole number"},
		{"input.items[5]", "index out of bounds: 5"},
	}
	for _, tt := range tests {
		p, err := env.Compile(tt.src)
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.src, err)
			continue
		}
		got, err := p.Eval(context.Background(), order())
		if err == nil {
			t.Errorf("Eval(%q) = %#v, want error %q", tt.src, got, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("Eval(%q) error = %q, want %q", tt.src, err, tt.want)
		}
	}
}

func TestEvalBool(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src     string
		want    bool
		wantErr string
	}{
		{src: "input.amount > 1000", want: true},
		{src: "input.currency == 'USD'", want: false},
		{src: "has(steps.lookup) && steps.lookup.output.name == 'ACME'", want: true},
		{src: "input.amount", wantErr: "expression must yield a bool, not double"},
		{src: "input.customer.name", wantErr: "expression must yield a bool, not string"},
		{src: "input.note", wantErr: "expression must yield a bool, not null"},
		{src: "input.customer", wantErr: "expression must yield a bool, not map"},
		{src: "input.missing > 1", wantErr: "no such key: missing"},
	}
	for _, tt := range tests {
		p, err := env.Compile(tt.src)
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.src, err)
			continue
		}
		got, err := p.EvalBool(context.Background(), order())
		var gotErr string
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("EvalBool(%q) = %v, %q; want %v, %q", tt.src, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

func TestCompileBool(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src     string
		wantErr string
	}{
		{"input.amount > 1000", ""},
		{"input.approved", ""},
		{"steps.lookup.output.name.startsWith('A')", ""},
		{"size(input.tags) * 2", "line 1, column 1: expression must yield a bool, not int"},
		{"'yes'", "line 1, column 1: expression must yield a bool, not string"},
		{"inpt.ok", "line 1, column 1: undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
	}
	for _, tt := range tests {
		_, err := env.CompileBool(tt.src)
		var got string
		if err != nil {
			got = err.Error()
		}
		if got != tt.wantErr {
			t.Errorf("CompileBool(%q) error = %q, want %q", tt.src, got, tt.wantErr)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	long := strings.Repeat("1 + ", 1100) + "1"
	deep := strings.Repeat("(", 40) + "1" + strings.Repeat(")", 40)
	tests := []struct {
		src          string
		line, column int
		message      string // a prefix of the message
	}{
		{"inpt.amount > 1000", 1, 1, "undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
		{"input.amount > 1000 && inpt", 1, 24, "undeclared reference to 'inpt'"},
		{"input.amount > 1000 &&\n  inpt.ok", 2, 3, "undeclared reference to 'inpt'"},
		{"input.amount >", 1, 15, "Syntax error: unexpected end of expression"},
		{"'x' + 1", 1, 5, "found no matching overload for '_+_' applied to '(string, int)'"},
		{"'né' + inpt", 1, 8, "undeclared reference to 'inpt'"},
		{"", 1, 1, "expression is empty"},
		{" \n ", 1, 1, "expression is empty"},
		{long, 1, 4097, "expression is 4401 characters long; the limit is 4096"},
		{deep, 1, 1, "expression nests more than 32 levels deep"},
		{"{'a': 1, b'b': 2}", 1, 10, "a map key must be an int, uint, bool or string, not bytes"},
		// cel-go panics when it plans a constant map with a bytes key.
		{"{dyn(b'a'): 1}", 1, 1, "expression cannot be compiled"},
	}
	for _, tt := range tests {
		_, err := env.Compile(tt.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Compile(%.40q) error = %v, want an *Error", tt.src, err)
			continue
		}
		if e.Line != tt.line || e.Column != tt.column || !strings.HasPrefix(e.Message, tt.message) {
			t.Errorf("Compile(%.40q) error at %d:%d %q, want %d:%d %q", tt.src, e.Line, e.Column, e.Message, tt.line, tt.column, tt.message)
		}
	}
}

func TestCompileErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := newEnv(t).Compile("input.amount > 1000 && inpt.ok")
	got, want := err.Error(), "line 1, column 24: undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLimitsAreOptions(t *testing.T) {
	t.Parallel()
	env := newEnv(t, WithMaxLength(10), WithMaxNesting(4))
	tests := []struct {
		src, want string
	}{
		{"1 + 2 + 3 + 4", "line 1, column 11: expression is 13 characters long; the limit is 10"},
		{"((((1))))", "line 1, column 1: expression nests more than 4 levels deep"},
	}
	for _, tt := range tests {
		_, err := env.Compile(tt.src)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Compile(%q) error = %v, want %q", tt.src, err, tt.want)
		}
	}
	sum := func(n int) string { return "input.a" + strings.Repeat(" + input.a", n-1) }
	if _, err := newEnv(t).Compile(sum(DefaultMaxNesting)); err != nil {
		t.Errorf("a sum of %d terms: %v", DefaultMaxNesting, err)
	}
	if _, err := newEnv(t).Compile(sum(DefaultMaxNesting + 1)); err == nil {
		t.Errorf("a sum of %d terms compiled, want a nesting error", DefaultMaxNesting+1)
	}
	if _, err := NewEnv(WithCostLimit(0)); err == nil {
		t.Error("NewEnv(WithCostLimit(0)) succeeded, want an error")
	}
}

// quadratic visits every pair of a list's elements.
const quadratic = "input.list.map(x, input.list.map(y, x + y)).size()"

func numbers(n int) Vars {
	list := make([]any, n)
	for i := range list {
		list[i] = float64(i)
	}
	return Vars{Input: map[string]any{"list": list}}
}

func TestCostLimit(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	p, err := env.Compile(quadratic)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Eval(context.Background(), numbers(10))
	if err != nil || got != int64(10) {
		t.Fatalf("Eval on 10 numbers = %v, %v; want 10", got, err)
	}
	_, err = p.Eval(context.Background(), numbers(1000))
	if !errors.Is(err, ErrCostLimit) {
		t.Fatalf("Eval on 1000 numbers error = %v, want ErrCostLimit", err)
	}
	if got, want := err.Error(), "expression exceeded its cost limit of 100000"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestCostLimitAddsUp checks that the expressions of one template or value
// share one limit: each placeholder alone is well under it, all together are
// not.
func TestCostLimitAddsUp(t *testing.T) {
	t.Parallel()
	env := newEnv(t, WithCostLimit(5000)) // quadratic costs 1854 on ten numbers
	one := "{{ " + quadratic + " }}"
	vars := numbers(10)
	tmpl, err := env.CompileTemplate(one)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Eval(context.Background(), vars); err != nil {
		t.Fatalf("one placeholder: %v", err)
	}
	tmpl, err = env.CompileTemplate(strings.Repeat(one, 10))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Eval(context.Background(), vars); !errors.Is(err, ErrCostLimit) {
		t.Errorf("ten placeholders: error = %v, want ErrCostLimit", err)
	}
	list := make([]any, 10)
	for i := range list {
		list[i] = one
	}
	val, err := env.CompileValue(map[string]any{"list": list})
	if err != nil {
		t.Fatal(err)
	}
	_, err = val.Eval(context.Background(), vars)
	if !errors.Is(err, ErrCostLimit) {
		t.Errorf("value of ten templates: error = %v, want ErrCostLimit", err)
	}
}

func TestContextCancellation(t *testing.T) {
	t.Parallel()
	env := newEnv(t, WithCostLimit(1<<62))
	p, err := env.Compile(quadratic)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Eval(ctx, numbers(10)); !errors.Is(err, context.Canceled) {
		t.Errorf("Eval with a cancelled context: error = %v, want context.Canceled", err)
	}

	// Some ten million steps: far longer than the deadline.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = p.Eval(ctx, numbers(3000))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Eval past its deadline: error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Eval stopped %v after it began, want soon after the 20ms deadline", d)
	}

	tmpl, err := env.CompileTemplate("n = {{ " + quadratic + " }}")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := tmpl.Eval(ctx, numbers(3000)); !errors.Is(err, context.DeadlineExceeded) || err.Error() != context.DeadlineExceeded.Error() {
		t.Errorf("Template.Eval past its deadline: error = %v, want context.DeadlineExceeded", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	env := newEnv(t, WithCacheSize(8))
	tmpl, err := env.CompileTemplate("{{ input.n }}: {{ input.n * 2 }}")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				n := int64(g*1000 + i)
				vars := Vars{Input: map[string]any{"n": n}}
				// Sources repeat across goroutines and outnumber the cache.
				p, err := env.Compile(fmt.Sprintf("input.n + %d", i%20))
				if err != nil {
					errs <- err
					return
				}
				got, err := p.Eval(context.Background(), vars)
				if want := float64(n + int64(i%20)); err != nil || got != want {
					errs <- fmt.Errorf("Eval = %v, %v; want %v", got, err, want)
					return
				}
				s, err := tmpl.Eval(context.Background(), vars)
				if want := fmt.Sprintf("%d: %d", n, 2*n); err != nil || s != want {
					errs <- fmt.Errorf("template = %v, %v; want %q", s, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCache(t *testing.T) {
	t.Parallel()
	env := newEnv(t, WithCacheSize(2))
	compile := func(src string) *Program {
		t.Helper()
		p, err := env.Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := compile("1 + 1")
	compile("2 + 2")
	if got := compile("1 + 1"); got != a {
		t.Error("a second Compile of the same source compiled it again, want the cached program")
	}
	compile("3 + 3") // pushes out "2 + 2", used least recently
	if _, ok := env.cache.get("2 + 2"); ok {
		t.Error(`"2 + 2" is still cached, want it pushed out`)
	}
	if _, ok := env.cache.get("1 + 1"); !ok {
		t.Error(`"1 + 1" was pushed out, want it kept`)
	}

	off := newEnv(t, WithCacheSize(0))
	p1, _ := off.Compile("1 + 1")
	p2, _ := off.Compile("1 + 1")
	if p1 == p2 {
		t.Error("with the cache off, Compile returned the same program twice")
	}
}

func BenchmarkCompile(b *testing.B) {
	const src = "input.amount > 1000 && steps.lookup.output.name.startsWith('AC')"
	for _, bc := range []struct {
		name string
		size int
		src  string
	}{
		{"cached", DefaultCacheSize, src},
		{"uncached", 0, src},
		// The number rules rewrite this one, which cel-go checks again.
		{"uncached-numbers", 0, "input.amount * 2 > steps.lookup.output.limit"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			env := newEnv(b, WithCacheSize(bc.size))
			for b.Loop() {
				if _, err := env.Compile(bc.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEvalWhen(b *testing.B) {
	p, err := newEnv(b).CompileBool("input.amount > 1000")
	if err != nil {
		b.Fatal(err)
	}
	vars := order()
	ctx := context.Background()
	for b.Loop() {
		if ok, err := p.EvalBool(ctx, vars); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkNewEnv is the work a function that compiles or evaluates
// expressions does once: NewEnv, and the first Compile, which builds
// cel-go's environment.
func BenchmarkNewEnv(b *testing.B) {
	for b.Loop() {
		env, err := NewEnv()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := env.Compile("1"); err != nil {
			b.Fatal(err)
		}
	}
}
