package expr

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestTemplate(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src  string
		want any
	}{
		// One placeholder, spaces around allowed: the value keeps its type.
		{"{{ input.amount }}", 1500.0},
		{"{{input.count}}", 3.0},
		{"  {{ input.customer }}\n", map[string]any{"name": "Ada", "email": "ada@example.com"}},
		{"{{ input.tags }}", []any{"urgent", "eu"}},
		{"{{ input.note }}", nil},
		{"{{ input.amount > 1000 }}", true},
		{"{{ {'a': {'b': 1}} }}", map[string]any{"a": map[string]any{"b": int64(1)}}},
		{"{{ execution.started_on }}", "2024-05-01T08:00:00Z"},
		// Otherwise a string: strings as they are, other values as JSON.
		{"Order {{ input.id }} from {{ steps.lookup.output.name }}", "Order PO-1 from ACME"},
		{"Total: {{ input.amount }} {{ input.currency }}", "Total: 1500 EUR"},
		{"{{ input.id }}{{ input.count }}", "PO-13"},
		{"Tags: {{ input.tags }}", `Tags: ["urgent","eu"]`},
		{"Customer: {{ input.customer }}", `Customer: {"email":"ada@example.com","name":"Ada"}`},
		{"{{ null }} and {{ true }}", "null and true"},
		{"x{{ {'html': '<b>&</b>'} }}", `x{"html":"<b>&</b>"}`},
		{"at {{ execution.started_on }}", "at 2024-05-01T08:00:00Z"},
		{"line one\n{{ input.id }}\nline three", "line one\nPO-1\nline three"},
		// Braces and quotes inside a placeholder.
		{`{{ "}}" }}`, "}}"},
		{"{{ '{{' + input.id }}", "{{PO-1"},
		{"{{ '''it's }}''' }}", "it's }}"},
		{`{{ r'\' }}`, `\`},
		{`{{ 'a\'}}' }}`, "a'}}"},
		{"{{ {'k': input.id}.k }}!", "PO-1!"},
		// No placeholders: the text.
		{"no placeholders", "no placeholders"},
		{"", ""},
		{"{ single } braces", "{ single } braces"},
	}
	for _, tt := range tests {
		tmpl, err := env.CompileTemplate(tt.src)
		if err != nil {
			t.Errorf("CompileTemplate(%q): %v", tt.src, err)
			continue
		}
		got, err := tmpl.Eval(context.Background(), order())
		if err != nil {
			t.Errorf("Eval(%q): %v", tt.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Eval(%q) = %#v, want %#v", tt.src, got, tt.want)
		}
	}
}

func TestTemplateCompileErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src  string
		want string
	}{
		{"Order {{ inpt.id }}", "line 1, column 10: undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
		{"Order {{input.id}} from {{ steps.x.output.name + }}", "line 1, column 50: Syntax error: unexpected end of expression"},
		{"Dear\n  {{ input.name }}, {{ inpt }}", "line 2, column 24: undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
		{"{{ input.a\n  + inpt.b }}", "line 2, column 5: undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
		{"ünï {{ inpt }}", "line 1, column 8: undeclared reference to 'inpt' (did you mean 'int' or 'input'?)"},
		{"Hello {{ input.name", `line 1, column 7: "{{" is not closed by "}}"`},
		{"Hello {{ input.name }", `line 1, column 7: "{{" is not closed by "}}"`},
		{"{{ 'open }}", `line 1, column 1: "{{" is not closed by "}}"`},
		{"Hello }} there", `line 1, column 7: "}}" without a "{{" before it`},
		{"{{ input.id }} }}", `line 1, column 16: "}}" without a "{{" before it`},
		{"a\n{{ }}", "line 2, column 1: placeholder is empty"},
	}
	for _, tt := range tests {
		_, err := env.CompileTemplate(tt.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("CompileTemplate(%q) error = %v, want an *Error", tt.src, err)
			continue
		}
		if got := err.Error(); got != tt.want {
			t.Errorf("CompileTemplate(%q) error:\n got %q\nwant %q", tt.src, got, tt.want)
		}
	}
}

func TestTemplateEvalErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src, want string
	}{
		{"Order {{ input.id }} from {{ steps.review.output.name }}", "line 1, column 27: no such key: review"},
		{"{{ input.missing }}", "line 1, column 1: no such key: missing"},
		{"x = {{ 1.0 / 0.0 }}", "line 1, column 5: result +Inf is not a number JSON can hold"},
	}
	for _, tt := range tests {
		tmpl, err := env.CompileTemplate(tt.src)
		if err != nil {
			t.Errorf("CompileTemplate(%q): %v", tt.src, err)
			continue
		}
		_, err = tmpl.Eval(context.Background(), order())
		if err == nil || err.Error() != tt.want {
			t.Errorf("Eval(%q) error = %v, want %q", tt.src, err, tt.want)
		}
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	config := map[string]any{
		"method": "POST",
		"url":    "https://erp.example.com/orders/{{ input.id }}",
		"headers": map[string]any{
			"Content-Type": "application/json",
			"X-Amount":     "{{ input.amount }}",
		},
		"body": map[string]any{
			"lines":  []any{"{{ input.items[0] }}", "fixed", 3.0, true, nil, []any{"{{ input.count }}"}},
			"gross":  "{{ input.amount * 1.2 }}",
			"vendor": "{{ steps.lookup.output }}",
		},
		"retries": 2.0,
	}
	want := map[string]any{
		"method": "POST",
		"url":    "https://erp.example.com/orders/PO-1",
		"headers": map[string]any{
			"Content-Type": "application/json",
			"X-Amount":     1500.0,
		},
		"body": map[string]any{
			"lines": []any{
				map[string]any{"sku": "A", "qty": 2.0, "price": 10.5},
				"fixed", 3.0, true, nil, []any{3.0},
			},
			"gross":  1800.0,
			"vendor": map[string]any{"name": "ACME", "limit": 5000.0},
		},
		"retries": 2.0,
	}
	v, err := env.CompileValue(config)
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Eval(context.Background(), order())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Eval =\n %#v\nwant\n %#v", got, want)
	}

	// Each Eval builds a new structure.
	got.(map[string]any)["headers"].(map[string]any)["X-Amount"] = "changed"
	again, err := v.Eval(context.Background(), order())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, want) {
		t.Errorf("second Eval =\n %#v\nwant\n %#v", again, want)
	}

	for _, scalar := range []any{"plain", "{{ input.id }}", 1.5, nil} {
		v, err := env.CompileValue(scalar)
		if err != nil {
			t.Fatalf("CompileValue(%#v): %v", scalar, err)
		}
		if _, err := v.Eval(context.Background(), order()); err != nil {
			t.Errorf("Eval of %#v: %v", scalar, err)
		}
	}
}

func TestValueErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	compileTests := []struct {
		value    any
		want     string
		wantPath string
	}{
		{
			map[string]any{"body": map[string]any{"items": []any{"ok", "{{ inpt }}"}}},
			"body.items[1]: line 1, column 4: undeclared reference to 'inpt' (did you mean 'int' or 'input'?)",
			"body.items[1]",
		},
		{
			map[string]any{"headers": map[string]any{"Content Type": "}}"}},
			`headers["Content Type"]: line 1, column 1: "}}" without a "{{" before it`,
			`headers["Content Type"]`,
		},
		{"{{ x", `line 1, column 1: "{{" is not closed by "}}"`, ""},
	}
	for _, tt := range compileTests {
		_, err := env.CompileValue(tt.value)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("CompileValue(%v) error = %v, want an *Error", tt.value, err)
			continue
		}
		if got := err.Error(); got != tt.want || e.Path != tt.wantPath {
			t.Errorf("CompileValue(%v) error = %q (path %q), want %q (path %q)", tt.value, got, e.Path, tt.want, tt.wantPath)
		}
	}

	_, err := env.CompileValue(map[string]any{"a": []string{"x"}})
	if got, want := err.Error(), "a: a value of type []string is not JSON"; got != want {
		t.Errorf("CompileValue of a []string: got %q, want %q", got, want)
	}

	v, err := env.CompileValue(map[string]any{"a": "ok", "b": []any{"{{ input.id }}", "id {{ input.missing }}"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Eval(context.Background(), order())
	if got, want := err.Error(), "b[1]: line 1, column 4: no such key: missing"; got != want {
		t.Errorf("Eval error: got %q, want %q", got, want)
	}
}

func BenchmarkTemplate(b *testing.B) {
	env := newEnv(b)
	for _, bc := range []struct{ name, src string }{
		{"typed", "{{ input.amount }}"},
		{"interpolated", "Order {{ input.id }} from {{ steps.lookup.output.name }} for {{ input.amount }}"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tmpl, err := env.CompileTemplate(bc.src)
			if err != nil {
				b.Fatal(err)
			}
			vars := order()
			ctx := context.Background()
			for b.Loop() {
				if _, err := tmpl.Eval(ctx, vars); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkValue(b *testing.B) {
	env := newEnv(b)
	v, err := env.CompileValue(map[string]any{
		"url":     "https://erp.example.com/orders/{{ input.id }}",
		"headers": map[string]any{"Content-Type": "application/json", "X-Amount": "{{ input.amount }}"},
		"body":    map[string]any{"vendor": "{{ steps.lookup.output.name }}", "lines": "{{ input.items }}"},
	})
	if err != nil {
		b.Fatal(err)
	}
	vars := order()
	ctx := context.Background()
	for b.Loop() {
		if _, err := v.Eval(ctx, vars); err != nil {
			b.Fatal(err)
		}
	}
}
