package expr

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/cardflow/cardflow/pkg/evalslots"
)

// takeTheOnlySlot sets the process to one evaluation at once and takes
// that slot, as an evaluation in the middle of its work holds it; release
// gives it back.
func takeTheOnlySlot(t *testing.T) (release func()) {
	t.Helper()
	before := evalslots.Limit()
	if err := evalslots.SetLimit(1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = evalslots.SetLimit(before) })
	s, err := evalslots.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Release
}

// waitForWaiter returns once an evaluation waits for a slot, and fails the
// test if instead one ends (done) while the only slot is taken.
func waitForWaiter(t *testing.T, done <-chan error) {
	t.Helper()
	for evalslots.Waiting() == 0 {
		select {
		case err := <-done:
			t.Fatalf("an evaluation ran while the only slot was taken (it returned %v)", err)
		default:
			runtime.Gosched()
		}
	}
}

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
			release := takeTheOnlySlot(t)
			done := make(chan error, 1)
			go func() {
				_, err := tt.eval(context.Background())
				done <- err
			}()
			waitForWaiter(t, done)
			release()
			if err := <-done; err != nil {
				t.Fatalf("got %v once the slot was given back, want the evaluation to succeed", err)
			}

			// A waiting evaluation ends with its context.
			release = takeTheOnlySlot(t)
			defer release()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				_, err := tt.eval(ctx)
				done <- err
			}()
			waitForWaiter(t, done)
			cancel()
			if got, want := <-done, context.Canceled; !errors.Is(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}
