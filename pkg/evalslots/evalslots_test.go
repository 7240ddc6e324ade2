package evalslots_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cardflow/cardflow/pkg/evalslots"
)

func TestSetLimitRefusesNoSlots(t *testing.T) {
	for _, n := range []int{0, -1} {
		if err := evalslots.SetLimit(n); err == nil {
			t.Errorf("SetLimit(%d): got no error, want one", n)
		}
	}
}

func TestAcquireWaitsAndEndsWithItsContext(t *testing.T) {
	before := evalslots.Limit()
	if err := evalslots.SetLimit(1); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = evalslots.SetLimit(before) }()
	held, err := evalslots.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, got := evalslots.Acquire(ctx); !errors.Is(got, context.Canceled) {
		t.Errorf("got %v, want %v", got, context.Canceled)
	}
	if got, want := evalslots.Waiting(), 0; got != want {
		t.Errorf("got %d waiting, want %d", got, want)
	}
	held.Release()
	s, err := evalslots.Acquire(context.Background())
	if err != nil {
		t.Fatalf("got %v once the slot was given back, want a slot", err)
	}
	s.Release()
}
