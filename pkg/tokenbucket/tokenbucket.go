// Package tokenbucket is the cardflow.RateLimiter of local mode: one token
// bucket per organization in memory (golang.org/x/time/rate), which is
// exact for the one process that serves the API.
package tokenbucket

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Limiter keeps a bucket per organization. It is safe for concurrent use.
type Limiter struct {
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// New returns a limiter that reads the clock with now (time.Now when nil).
func New(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, buckets: map[string]*rate.Limiter{}}
}

var _ cardflow.RateLimiter = (*Limiter)(nil)

// Take takes a token of org's bucket, which refills at l's rate and holds
// l's burst (at least one). With none left it takes nothing and answers
// when the next one comes.
func (b *Limiter) Take(_ context.Context, org string, l cardflow.Limits) error {
	if l.RatePerSecond <= 0 {
		return nil
	}
	limit, burst := rate.Limit(l.RatePerSecond), max(l.Burst, 1)
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	lim, ok := b.buckets[org]
	if !ok || lim.Limit() != limit || lim.Burst() != burst {
		// A new organization, or its limits changed: a full bucket, so a
		// raised limit holds at once.
		lim = rate.NewLimiter(limit, burst)
		b.buckets[org] = lim
	}
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return cardflow.Throttled(d, "organization %s is over its rate of %g requests a second; try again later", org, l.RatePerSecond)
	}
	return nil
}
