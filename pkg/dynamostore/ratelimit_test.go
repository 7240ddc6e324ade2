package dynamostore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestRateLimiter counts requests of two organizations in the shared
// table: a window admits rate × its length requests (length burst/rate),
// the next is THROTTLED until the window ends, and the other organization
// counts on its own.
func TestRateLimiter(t *testing.T) {
	s := newStore(t)
	clock := &fakeClock{t: time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)}
	rl := dynamostore.NewRateLimiter(s, clock.now)
	org, other := "org-"+cardflow.NewID(clock.now()), "org-"+cardflow.NewID(clock.now())
	l := cardflow.Limits{RatePerSecond: 2, Burst: 4}
	clock.add(500 * time.Millisecond)
	for i := range 4 {
		if err := rl.Take(t.Context(), org, l); err != nil {
			t.Fatalf("request %d within the window: %v", i+1, err)
		}
	}
	err := rl.Take(t.Context(), org, l)
	if got, want := cardflow.ErrorCode(err), cardflow.ETHROTTLED; got != want {
		t.Fatalf("request past the window's count: got code %q (%v), want %q", got, err, want)
	}
	if got, want := cardflow.RetryAfterOf(err), 1500*time.Millisecond; got != want {
		t.Errorf("retry after: got %v, want %v (the rest of the 2 s window)", got, want)
	}
	if err := rl.Take(t.Context(), other, l); err != nil {
		t.Errorf("another organization: got %v, want its request admitted", err)
	}
	clock.add(1500 * time.Millisecond)
	if err := rl.Take(t.Context(), org, l); err != nil {
		t.Errorf("request in the next window: got %v, want admitted", err)
	}
	if err := rl.Take(t.Context(), org, cardflow.Limits{}); err != nil {
		t.Errorf("no rate: got %v, want admitted", err)
	}
}

// BenchmarkRateLimiterTake is the cost of the limit check on AWS: one
// conditional UpdateItem per request (here against DynamoDB Local).
func BenchmarkRateLimiterTake(b *testing.B) {
	s := newStore(b)
	rl := dynamostore.NewRateLimiter(s, nil)
	org := "org-" + cardflow.NewID(time.Now())
	l := cardflow.Limits{RatePerSecond: 1e9, Burst: 1e9}
	for b.Loop() {
		if err := rl.Take(b.Context(), org, l); err != nil {
			b.Fatal(err)
		}
	}
}
