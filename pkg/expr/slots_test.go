package expr

import (
	"context"
	"errors"
	"testing"

	"github.com/cardflow/cardflow/internal/evalslotstest"
)

func TestEvaluationsTakeTurns(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	prg, err := env.Compile("input.a + 1")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := env.CompileTemplate("a is {{ input.a }}")
	if err != nil {
		t.Fatal(err)
	}
	val, err := env.CompileValue(map[string]any{"a": "{{ input.a }}"})
	if err != nil {
		t.Fatal(err)
	}
	vars := Vars{Input: map[string]any{"a": 1.0}}
	for _, tt := range []struct {
		name string
		eval func(context.Context) (any, error)
	}{
		{"Program.Eval", func(ctx context.Context) (any, error) { return prg.Eval(ctx, vars) }},
		{"Program.EvalBool", func(ctx context.Context) (any, error) {
			p, err := env.CompileBool("input.a > 0")
			if err != nil {
				return nil, err
			}
			return p.EvalBool(ctx, vars)
		}},
		{"Template.Eval", func(ctx context.Context) (any, error) { return tmpl.Eval(ctx, vars) }},
		{"Value.Eval", func(ctx context.Context) (any, error) { return val.Eval(ctx, vars) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			release := evalslotstest.TakeTheOnlySlot(t)
			done := make(chan error, 1)
			go func() {
				_, err := tt.eval(context.Background())
				done <- err
			}()
			evalslotstest.WaitForWaiter(t, done)
			release()
			if err := <-done; err != nil {
				t.Fatalf("got %v once the slot was given back, want the evaluation to succeed", err)
			}

			// A waiting evaluation ends with its context.
			release = evalslotstest.TakeTheOnlySlot(t)
			defer release()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				_, err := tt.eval(ctx)
				done <- err
			}()
			evalslotstest.WaitForWaiter(t, done)
			cancel()
			if got, want := <-done, context.Canceled; !errors.Is(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}
