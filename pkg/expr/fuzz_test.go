package expr

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// checkResult holds what every evaluation promises: an error, or a value
// that encodes as JSON.
func checkResult(t *testing.T, src string, v any, err error) {
	t.Helper()
	if err != nil {
		if err.Error() == "" {
			t.Fatalf("%q: got an error without a message", src)
		}
		return
	}
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("%q: got %#v, which is not JSON: %v", src, v, err)
	}
}

// checkCompileError holds that a refused source is named by position.
func checkCompileError(t *testing.T, src string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: got %T %v, want an *Error", src, err, err)
	}
	if e.Message == "" || e.Line < 1 || e.Column < 1 {
		t.Fatalf("%q: got %+v, want a message at line and column from 1", src, e)
	}
}

// FuzzExpression compiles and evaluates fuzzed CEL, seeded with the
// corpus: within the cost limit and a deadline, it yields a JSON value or
// an error, and never panics.
func FuzzExpression(f *testing.F) {
	env, err := NewEnv()
	if err != nil {
		f.Fatal(err)
	}
	for _, src := range []string{
		`input.amount > 1000`,
		`input.items.map(i, i.qty * i.price).exists(x, x > 50.0)`,
		`input.?discount.orValue(0.0) + 1.0`,
		`[1, 2, 3].map(x, [1, 2, 3].map(y, x * y))`,
		`steps.lookup.output.name + "-" + execution.id`,
		`timestamp(execution.started_on) + duration("1h")`,
		`"a".repeat(100000)`,
		`cel.bind(x, input.tags, x.size())`,
		`input.amount * 2 + input.count % 2 - size(input.items) / 1.5`,
	} {
		f.Add(src)
	}
	for _, src := range corpus {
		f.Add(src)
	}
	vars := order()
	f.Fuzz(func(t *testing.T, src string) {
		p, err := env.Compile(src)
		if err != nil {
			checkCompileError(t, src, err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		v, err := p.Eval(ctx, vars)
		checkResult(t, src, v, err)
	})
}

// FuzzTemplate compiles and renders fuzzed {{ }} templates the same way.
func FuzzTemplate(f *testing.F) {
	env, err := NewEnv()
	if err != nil {
		f.Fatal(err)
	}
	for _, src := range []string{
		`Order {{ input.id }} for {{ input.amount }} {{ input.currency }}`,
		`{{ input.items }}`,
		`{{ "}}" }} and {{ '{{' }}`,
		`plain text }}`,
		`{{ input.customer.name }`,
		`{{ r"\}}" }}{{ input.tags[0] }}`,
	} {
		f.Add(src)
	}
	vars := order()
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := env.CompileTemplate(src)
		if err != nil {
			checkCompileError(t, src, err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		v, err := tpl.Eval(ctx, vars)
		checkResult(t, src, v, err)
	})
}
