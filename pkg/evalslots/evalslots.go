// Package evalslots bounds how many evaluations of expressions (pkg/expr)
// and expansions of card templates (pkg/cards) run at once in the process.
// Each one is bounded on its own by what it may build; the slots bound how
// many such budgets are spent together, so that the memory they take is at
// most Limit() times one budget however many executions and requests
// arrive (docs/DECISIONS.md). The work is CPU-bound: running more at once
// than there are CPUs finishes none sooner.
package evalslots

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

type slots struct {
	sem *semaphore.Weighted
	n   int
}

var (
	current atomic.Pointer[slots]
	waiting atomic.Int64
)

func init() {
	n := runtime.GOMAXPROCS(0)
	current.Store(&slots{sem: semaphore.NewWeighted(int64(n)), n: n})
}

// SetLimit sets how many evaluations run at once, GOMAXPROCS by default.
// It is meant for start-up: evaluations running meanwhile give their slot
// back to the slots they took it from.
func SetLimit(n int) error {
	if n < 1 {
		return errors.New("evalslots: the number of evaluations at once must be positive")
	}
	current.Store(&slots{sem: semaphore.NewWeighted(int64(n)), n: n})
	return nil
}

// Limit is how many evaluations run at once.
func Limit() int { return current.Load().n }

// Slot is a slot taken; Release gives it back.
type Slot struct{ sem *semaphore.Weighted }

// Acquire waits for a slot, or until ctx ends: then it returns ctx's
// error. Hold it around the evaluation only, never around a call that
// waits on something else (a store, the network), so that a slow call
// never keeps another evaluation waiting.
func Acquire(ctx context.Context) (Slot, error) {
	s := current.Load()
	if !s.sem.TryAcquire(1) {
		waiting.Add(1)
		err := s.sem.Acquire(ctx, 1)
		waiting.Add(-1)
		if err != nil {
			return Slot{}, err
		}
	}
	return Slot{sem: s.sem}, nil
}

// Waiting is how many evaluations wait for a slot.
func Waiting() int { return int(waiting.Load()) }

// Release gives the slot back.
func (s Slot) Release() { s.sem.Release(1) }
