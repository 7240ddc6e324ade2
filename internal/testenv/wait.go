package testenv

import (
	"testing"
	"time"
)

// WaitTimeout is how long WaitFor waits: generous, since a passing test
// ends as soon as its condition holds, and a loaded machine is slow.
const WaitTimeout = time.Minute

// WaitFor polls cond until it holds, and fails tb, naming what it waited
// for, when it still does not after WaitTimeout. cond may call tb.Fatal.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v for %s", WaitTimeout, what)
		}
		time.Sleep(pause)
	}
}
