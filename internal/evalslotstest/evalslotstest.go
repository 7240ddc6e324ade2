// Package evalslotstest holds the one evaluation slot of the process for
// the tests that show an evaluation waits for it.
package evalslotstest

import (
	"context"
	"runtime"
	"testing"

	"github.com/cardflow/cardflow/pkg/evalslots"
)

// TakeTheOnlySlot sets the process to one evaluation at once and takes
// that slot, as an evaluation in the middle of its work holds it; release
// gives it back. The limit before is restored when the test ends.
func TakeTheOnlySlot(t *testing.T) (release func()) {
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

// WaitForWaiter returns once an evaluation waits for a slot, and fails the
// test if instead one ends (done) while the only slot is taken.
func WaitForWaiter(t *testing.T, done <-chan error) {
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
