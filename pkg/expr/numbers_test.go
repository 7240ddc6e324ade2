package expr

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// purchase is a trigger body as the API decodes it, with the outputs of
// the steps README.md's examples read.
func purchase(t *testing.T) Vars {
	t.Helper()
	var input any
	body := `{"amount": 5000, "qty": 3, "price": 2.5, "n": 7, "a": 5, "i": 1, "po": "4500000123",
		"items": [{"sku": "A", "price": 10.5}, {"sku": "B", "price": 99}, {"sku": "C", "price": 1}]}`
	if err := json.Unmarshal([]byte(body), &input); err != nil {
		t.Fatal(err)
	}
	return Vars{
		Input: input,
		Steps: map[string]any{
			"approve": map[string]any{"approver": "Ada"},
			"po":      map[string]any{"body": map[string]any{"Supplier": "ACME"}},
			"wait":    map[string]any{"PurchaseOrder": "4500000123"},
		},
	}
}

// TestNumbers holds the number rules: JSON numbers are doubles, integer
// literals mix with them, and whole results are written as whole numbers.
// It also evaluates every expression and template README.md shows.
func TestNumbers(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src  string
		want string // the JSON of the result
	}{
		// A JSON number and an integer literal.
		{"input.amount * 2", `10000`},
		{"input.qty + 1", `4`},
		{"input.amount - 1", `4999`},
		{"1 - input.amount", `-4999`},
		{"input.amount > 1000", `true`},
		{"input.amount == 5000", `true`},
		{"input.amount * 2 == 10000", `true`},
		{"input.amount * 2 > 1000", `true`},
		{"size(input.items) * input.price", `7.5`},
		{"input.price * size(input.items)", `7.5`},
		{"input.n % 2 == 0", `false`},
		{"input.n % 2", `1`},
		{"input.amount % 3.0", `2`},
		{"input.a / 2", `2.5`},
		{"input.amount / 3", `1666.6666666666667`},
		{"-input.amount * 2", `-10000`},
		{"input.amount * 2 + input.qty * 3 - 1", `10008`},
		{"input.amount * 1.19", `5950`},
		{"(input.amount > 1000 ? input.amount * 2 : 0) + 1", `10001`},
		{"{'total': input.amount * 2}", `{"total":10000}`},
		{"input.items.map(i, i.price * 2)", `[21,198,2]`},
		{"input.items.filter(i, i.price > 50).size()", `1`},
		{"cel.bind(double_it, input.amount * 2, double_it + 1)", `10001`},
		{"input.?discount.orValue(0) * input.amount", `0`},
		{"input.?discount.orValue(0) + 1", `1`},
		{"math.greatest(3, 2.5) * input.qty", `9`},
		{"[1, 2.5].map(x, x * 2)", `[2,5]`},
		{"dyn(3) * input.price", `7.5`},
		{"3u * input.qty", `9`},
		// Integer literals alone stay ints; int() truncates.
		{"7 / 2", `3`},
		{"7 % 2", `1`},
		{"int(input.a / 2)", `2`},
		{"int(input.amount) * 2", `10000`},
		{"1 + 1.5", `2.5`},
		{"(1 + 1.5) * 2 == 5", `true`},
		{"(size(input.items) + 1.0) % 2", `0`},
		{"size(input.items) * 1.5", `4.5`},
		// Whole JSON numbers index lists and take the place of ints.
		{"input.items[input.i].sku", `"B"`},
		{"input.items[size(input.items) - 1].sku", `"C"`},
		{"input.items[input.qty - 1].sku", `"C"`},
		{"['x', 'y'][input.i]", `"y"`},
		{"input.po.substring(input.n)", `"123"`},
		{"lists.range(input.qty)", `[0,1,2]`},
		{"math.round(input.price * 3)", `8`},
		// README.md's expressions and templates.
		{"{{ input.amount }}", `5000`},
		{"{{ input.amount * 2 }}", `10000`},
		{"Total: {{ input.amount * 2 }} EUR", `"Total: 10000 EUR"`},
		{"A_PurchaseOrder('{{ input.po }}')", `"A_PurchaseOrder('4500000123')"`},
		{"{{ input.po }}", `"4500000123"`},
		{"Approved by {{ steps.approve.output.approver }}", `"Approved by Ada"`},
		{"steps.po.output.body.Supplier", `"ACME"`},
		{"steps.wait.output.PurchaseOrder", `"4500000123"`},
	}
	vars := purchase(t)
	for _, tt := range tests {
		var got any
		var err error
		if strings.Contains(tt.src, "{{") {
			var tmpl *Template
			if tmpl, err = env.CompileTemplate(tt.src); err == nil {
				got, err = tmpl.Eval(context.Background(), vars)
			}
		} else {
			var p *Program
			if p, err = env.Compile(tt.src); err == nil {
				got, err = p.Eval(context.Background(), vars)
			}
		}
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		j, err := json.Marshal(got)
		if err != nil {
			t.Errorf("%s: %#v is not JSON: %v", tt.src, got, err)
			continue
		}
		if string(j) != tt.want {
			t.Errorf("%s = %s, want %s", tt.src, j, tt.want)
		}
	}
}

// TestNumberErrors holds what is refused or fails, and where.
func TestNumberErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		src, want string
	}{
		// Known when compiled: refused, with the position.
		{"input.amount % 2.5", "line 1, column 16: % needs whole numbers, not 2.5"},
		{"7.5 % 2", "line 1, column 1: % needs whole numbers, not 7.5"},
		{"'total: ' + 1.5", "line 1, column 11: found no matching overload for '_+_' applied to '(string, double)'"},
		{"size(input.items) + 1u", "line 1, column 19: found no matching overload for '_+_' applied to '(int, uint)'"},
		// Known only when run.
		{"input.price % 2", "2.5 is not a whole number"},
		{"input.po * 2", "no such overload"},
		{"input.items[input.price]", "unsupported index value 2.5 in list"},
		{"input.amount / 0", "result +Inf is not a number JSON can hold"},
	}
	vars := purchase(t)
	for _, tt := range tests {
		p, err := env.Compile(tt.src)
		if err == nil {
			_, err = p.Eval(context.Background(), vars)
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.src, err, tt.want)
		}
	}
}

// TestNumbersNeverMismatch evaluates generated arithmetic over every kind
// of number an expression meets: whatever compiles never fails at run time
// for mixing ints, uints and doubles.
func TestNumbersNeverMismatch(t *testing.T) {
	t.Parallel()
	env := newEnv(t, WithCacheSize(0))
	vars := purchase(t)
	atoms := []string{
		"2", "0", "-3", "7u", "1.5", "0.0", "input.amount", "input.qty", "input.price", "input.items[0].price",
		"size(input.items)", "dyn(4)", "[1, 2.5][0]", "input.?discount.orValue(0)", "math.greatest(3, 2.5)",
		"int(input.price)", "double(2)", "{'k': 1, 'l': 'x'}.k", "lists.range(3)[1]",
	}
	ops := []string{"+", "-", "*", "/", "%", "<", "==", ">="}
	rnd := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || rnd.IntN(3) == 0 {
			return atoms[rnd.IntN(len(atoms))]
		}
		op := ops[rnd.IntN(len(ops))]
		if op == "<" || op == "==" || op == ">=" {
			return "(" + gen(depth-1) + " " + op + " " + gen(depth-1) + " ? " + gen(depth-1) + " : " + gen(depth-1) + ")"
		}
		return "(" + gen(depth-1) + " " + op + " " + gen(depth-1) + ")"
	}
	n := 3000
	if testing.Short() {
		n = 500 // the quick tier
	}
	compiled := 0
	for range n {
		src := gen(3)
		p, err := env.Compile(src)
		if err != nil {
			continue
		}
		compiled++
		if _, err := p.Eval(context.Background(), vars); err != nil && strings.Contains(err.Error(), "no such overload") {
			t.Errorf("%s: %v", src, err)
		}
	}
	if compiled < n/3 {
		t.Errorf("only %d of %d generated expressions compiled, want most", compiled, n)
	}
}
