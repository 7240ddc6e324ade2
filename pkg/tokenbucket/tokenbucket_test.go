package tokenbucket_test

import (
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/tokenbucket"
)

func TestTake(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	b := tokenbucket.New(func() time.Time { return now })
	l := cardflow.Limits{RatePerSecond: 2, Burst: 3}
	for i := range 3 {
		if err := b.Take(t.Context(), "org-a", l); err != nil {
			t.Fatalf("request %d of the burst: %v", i+1, err)
		}
	}
	err := b.Take(t.Context(), "org-a", l)
	if got, want := cardflow.ErrorCode(err), cardflow.ETHROTTLED; got != want {
		t.Fatalf("past the burst: got code %q, want %q", got, want)
	}
	// The next token comes after 1/rate; RetryAfterOf rounds up to a second.
	if got, want := cardflow.RetryAfterOf(err), time.Second; got != want {
		t.Errorf("retry after: got %v, want %v", got, want)
	}
	if err := b.Take(t.Context(), "org-b", l); err != nil {
		t.Errorf("another organization: got %v, want admitted", err)
	}
	now = now.Add(500 * time.Millisecond)
	if err := b.Take(t.Context(), "org-a", l); err != nil {
		t.Errorf("after one token's time: got %v, want admitted", err)
	}
	if err := b.Take(t.Context(), "org-a", l); cardflow.ErrorCode(err) != cardflow.ETHROTTLED {
		t.Errorf("again at once: got %v, want THROTTLED", err)
	}
	// Changed limits hold at once, with a full bucket.
	raised := cardflow.Limits{RatePerSecond: 2, Burst: 10}
	for i := range 10 {
		if err := b.Take(t.Context(), "org-a", raised); err != nil {
			t.Fatalf("request %d of the raised burst: %v", i+1, err)
		}
	}
}

// BenchmarkTake is the cost of the limit check in local mode, per request.
func BenchmarkTake(b *testing.B) {
	bucket := tokenbucket.New(nil)
	l := cardflow.Limits{RatePerSecond: 1e9, Burst: 1e9}
	for b.Loop() {
		if err := bucket.Take(b.Context(), "org-a", l); err != nil {
			b.Fatal(err)
		}
	}
}
