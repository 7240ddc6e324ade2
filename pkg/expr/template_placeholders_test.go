package expr

import (
	"context"
	"reflect"
	"testing"
)

func TestTemplatePlaceholders(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src          string
		wantLiterals []string
		wantValues   []any
	}{
		{"https://x/orders/{{ input.id }}?n={{ input.amount }}", []string{"https://x/orders/", "?n=", ""}, []any{"PO-1", 1500.0}},
		{"{{ input.customer }}", []string{"", ""}, []any{map[string]any{"name": "Ada", "email": "ada@example.com"}}},
		{"{{ input.id }}{{ input.currency }}", []string{"", "", ""}, []any{"PO-1", "EUR"}},
		{"A('{{ '}}' }}')", []string{"A('", "')"}, []any{"}}"}},
		{"no placeholders", []string{"no placeholders"}, []any{}},
	}
	for _, tt := range tests {
		tmpl, err := env.CompileTemplate(tt.src)
		if err != nil {
			t.Fatalf("CompileTemplate(%q): %v", tt.src, err)
		}
		if got := tmpl.Literals(); !reflect.DeepEqual(got, tt.wantLiterals) {
			t.Errorf("Literals(%q) = %q, want %q", tt.src, got, tt.wantLiterals)
		}
		got, err := tmpl.EvalPlaceholders(context.Background(), order())
		if err != nil {
			t.Errorf("EvalPlaceholders(%q): %v", tt.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.wantValues) {
			t.Errorf("EvalPlaceholders(%q) = %#v, want %#v", tt.src, got, tt.wantValues)
		}
	}

	// The literals are the template's own: changing them changes nothing.
	tmpl, err := env.CompileTemplate("a{{ input.id }}b")
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Literals()[0] = "changed"
	if got, _ := tmpl.Eval(context.Background(), order()); got != "aPO-1b" {
		t.Errorf("after changing Literals' answer, Eval = %v, want aPO-1b", got)
	}

	// An error names the placeholder's position, as Eval's do.
	tmpl, err = env.CompileTemplate("x/{{ input.id }}/{{ input.missing }}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.EvalPlaceholders(context.Background(), order())
	if want := "line 1, column 18: no such key: missing"; err == nil || err.Error() != want {
		t.Errorf("EvalPlaceholders error = %v, want %q", err, want)
	}
}
