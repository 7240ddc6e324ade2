package expr

import (
	"context"
	"errors"
	"testing"
)

// TestEvaluatorAgreesOnGenerated runs the differential corpus and generated
// programs through the evaluator, on trees built by the reference parser.
func TestEvaluatorAgreesOnGenerated(t *testing.T) {
	ref := newReference(t)
	srcs := append([]string{}, corpus...)
	for seed := range uint64(4000) {
		srcs = append(srcs, generate(seed))
	}
	for _, src := range srcs {
		want := ref.run(src, order())
		if !want.compiled {
			continue
		}
		val, err := evalTree(context.Background(), celTree(t, src), order(), DefaultCostLimit)
		got := outcome{compiled: true, value: val, err: err, costly: errors.Is(err, ErrCostLimit)}
		if what, ok := agree(got, want); !ok {
			t.Errorf("%s: %s differs:\n got  %v\n want %v", src, what, got, want)
		}
	}
}
