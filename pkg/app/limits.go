package app

import (
	"context"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// limiter holds what the service enforces of the organizations' limits:
// the deployment's defaults, the rate limiter, and the overrides read
// lately, so that a request costs no read of its organization's override.
type limiter struct {
	defaults cardflow.Limits
	rate     cardflow.RateLimiter

	mu        sync.RWMutex
	overrides map[string]cachedLimits
}

type cachedLimits struct {
	l    *cardflow.Limits
	read time.Time
}

// overrideTTL is how long an override read is used before it is read
// again: a change made elsewhere (another Lambda instance, the CLI against
// DynamoDB) takes effect within it; one made through this service at once.
const overrideTTL = 30 * time.Second

// WithLimits enforces the organizations' limits: defaults where an
// organization has no override of its own, request rates counted by rate
// (nil: no rate limit), and the cap on open executions at each trigger
// and scheduled run.
func WithLimits(defaults cardflow.Limits, rate cardflow.RateLimiter) Option {
	return func(s *Base) {
		s.limits = &limiter{defaults: defaults, rate: rate, overrides: map[string]cachedLimits{}}
	}
}

// LimitsOf returns the limits that hold for org: its override over the
// defaults. Without WithLimits there are none (the zero Limits).
func (s *Base) LimitsOf(ctx context.Context, org string) (cardflow.Limits, error) {
	if s.limits == nil {
		return cardflow.Limits{OrganizationID: org}, nil
	}
	l := s.limits
	now := s.now()
	// Every request looks its organization up here: readers share the
	// lock.
	l.mu.RLock()
	c, ok := l.overrides[org]
	l.mu.RUnlock()
	if !ok || now.Sub(c.read) > overrideTTL {
		o, err := s.store.GetLimits(ctx, org)
		if err != nil && cardflow.ErrorCode(err) != cardflow.ENOTFOUND {
			return cardflow.Limits{}, err
		}
		c = cachedLimits{l: o, read: now}
		l.mu.Lock()
		l.overrides[org] = c
		l.mu.Unlock()
	}
	out := l.defaults.Over(c.l)
	out.OrganizationID = org
	return out, nil
}

// Admit counts a request of p's organization against its rate; past it,
// an ETHROTTLED error with the wait.
func (s *Base) Admit(ctx context.Context, p *cardflow.Principal) error {
	if s.limits == nil || s.limits.rate == nil || p == nil {
		return nil
	}
	l, err := s.LimitsOf(ctx, p.OrganizationID)
	if err != nil {
		return err
	}
	return s.limits.rate.Take(ctx, p.OrganizationID, l)
}

// withOpenLimit returns ctx carrying org's cap on open executions, which
// the store enforces as it creates the execution.
func (s *Base) withOpenLimit(ctx context.Context, org string) (context.Context, error) {
	l, err := s.LimitsOf(ctx, org)
	if err != nil || l.MaxOpenExecutions <= 0 {
		return ctx, err
	}
	return cardflow.WithOpenExecutionLimit(ctx, l.MaxOpenExecutions), nil
}

// SetLimits stores org's override of the default limits; its zero fields
// keep the defaults. It is an operator's action (the admin CLI), not an
// API call: an organization does not set its own limits.
func (s *Admin) SetLimits(ctx context.Context, l cardflow.Limits) (*cardflow.Limits, error) {
	if l.OrganizationID == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "limits need an organization")
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	l.ModifiedOn = s.millis()
	if err := s.store.PutLimits(ctx, &l); err != nil {
		return nil, err
	}
	s.forgetLimits(l.OrganizationID)
	return &l, nil
}

// ClearLimits removes org's override: the defaults hold again.
func (s *Admin) ClearLimits(ctx context.Context, org string) error {
	if err := s.store.DeleteLimits(ctx, org); err != nil {
		return err
	}
	s.forgetLimits(org)
	return nil
}

func (s *Base) forgetLimits(org string) {
	if s.limits != nil {
		s.limits.mu.Lock()
		delete(s.limits.overrides, org)
		s.limits.mu.Unlock()
	}
}

// OrganizationLimits returns org's override; ENOTFOUND when the defaults
// hold for it.
func (s *Admin) OrganizationLimits(ctx context.Context, org string) (*cardflow.Limits, error) {
	return s.store.GetLimits(ctx, org)
}
