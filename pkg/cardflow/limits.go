package cardflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Limits bound what one organization may ask of the service (OWASP API4):
// how many requests a second its keys may make, and how many of its
// executions may be open (RUNNING or WAITING) at once. A zero field means
// "the deployment's default" in a stored override, and "no limit" once
// resolved.
type Limits struct {
	OrganizationID string `json:"organization_id"`
	// RatePerSecond is the sustained request rate of the organization's
	// keys together.
	RatePerSecond float64 `json:"rate_per_second,omitempty"`
	// Burst is how many requests may come at once above the rate.
	Burst int `json:"burst,omitempty"`
	// MaxOpenExecutions caps the organization's open executions; a trigger
	// or scheduled run past it is refused.
	MaxOpenExecutions int   `json:"max_open_executions,omitempty"`
	ModifiedOn        int64 `json:"modified_on,omitempty"`
}

// Over returns l with the fields o sets replacing l's: an organization's
// override over the deployment's defaults.
func (l Limits) Over(o *Limits) Limits {
	if o == nil {
		return l
	}
	if o.RatePerSecond > 0 {
		l.RatePerSecond = o.RatePerSecond
	}
	if o.Burst > 0 {
		l.Burst = o.Burst
	}
	if o.MaxOpenExecutions > 0 {
		l.MaxOpenExecutions = o.MaxOpenExecutions
	}
	return l
}

// Validate checks the fields a person sets.
func (l Limits) Validate() error {
	switch {
	case l.RatePerSecond < 0 || math.IsNaN(l.RatePerSecond) || math.IsInf(l.RatePerSecond, 0):
		return Errorf(EINVALID, "the request rate must be a positive number of requests a second")
	case l.Burst < 0:
		return Errorf(EINVALID, "the burst must be a positive whole number of requests")
	case l.MaxOpenExecutions < 0:
		return Errorf(EINVALID, "the cap on open executions must be a positive whole number")
	}
	return nil
}

// LimitStore keeps the organizations' overrides of the default limits.
// Adapters of Store implement it; the contract suite covers it.
type LimitStore interface {
	// GetLimits returns an organization's override; ENOTFOUND when it has
	// none.
	GetLimits(ctx context.Context, org string) (*Limits, error)
	// PutLimits creates or replaces an organization's override.
	PutLimits(ctx context.Context, l *Limits) error
	// DeleteLimits removes an override; removing a missing one is not an
	// error.
	DeleteLimits(ctx context.Context, org string) error
}

// RateLimiter counts an organization's requests against its rate.
type RateLimiter interface {
	// Take counts one request of org. Past the rate of l it returns an
	// ETHROTTLED *Error whose RetryAfter says when to try again.
	Take(ctx context.Context, org string, l Limits) error
}

// Throttled returns the ETHROTTLED error of a refused request, which the
// API answers 429 with Retry-After: retry, rounded up to whole seconds.
func Throttled(retry time.Duration, format string, args ...any) *Error {
	return &Error{Code: ETHROTTLED, Message: fmt.Sprintf(format, args...), RetryAfter: max(retry, time.Second)}
}

// TooManyOpen is the error of a start refused because org has max open
// executions. When one ends is not known; a minute is a fair wait.
func TooManyOpen(org string, max int) *Error {
	return Throttled(time.Minute, "organization %s has %d open executions, its limit; wait for some to finish or cancel them", org, max)
}

type openLimitKey struct{}

// WithOpenExecutionLimit returns ctx carrying the cap on open executions
// that a store's StartExecution enforces in the same atomic change that
// creates the execution. Triggers and scheduled runs set it; executions
// started as a step of another are counted but not refused, so a running
// parent never fails for its child.
func WithOpenExecutionLimit(ctx context.Context, max int) context.Context {
	return context.WithValue(ctx, openLimitKey{}, max)
}

// OpenExecutionLimit returns the cap ctx carries; 0 for none.
func OpenExecutionLimit(ctx context.Context) int {
	n, _ := ctx.Value(openLimitKey{}).(int)
	return n
}

// RetryAfterOf returns how long the caller refused with err should wait:
// the error's own RetryAfter, or a second for other THROTTLED errors (a
// store or a runner that is busy).
func RetryAfterOf(err error) time.Duration {
	var e *Error
	if !errors.As(err, &e) {
		return 0
	}
	if e.Code == ETHROTTLED {
		return max(e.RetryAfter, time.Second)
	}
	return e.RetryAfter
}

// Names of the settings of the default limits, as environment variables
// (local mode's flags read them too).
const (
	EnvOrgRate    = "CARDFLOW_ORG_RATE"
	EnvOrgBurst   = "CARDFLOW_ORG_BURST"
	EnvOrgMaxOpen = "CARDFLOW_ORG_MAX_OPEN"
)

// ParseLimits reads default limits as settings give them: a rate of
// requests a second, a burst and a cap on open executions; "" or "0" for
// none.
func ParseLimits(rate, burst, maxOpen string) (Limits, error) {
	var l Limits
	var err error
	if rate != "" {
		if l.RatePerSecond, err = strconv.ParseFloat(rate, 64); err != nil {
			return l, fmt.Errorf("%s %q is not a number of requests a second", EnvOrgRate, rate)
		}
	}
	if burst != "" {
		if l.Burst, err = strconv.Atoi(burst); err != nil {
			return l, fmt.Errorf("%s %q is not a whole number of requests", EnvOrgBurst, burst)
		}
	}
	if maxOpen != "" {
		if l.MaxOpenExecutions, err = strconv.Atoi(maxOpen); err != nil {
			return l, fmt.Errorf("%s %q is not a whole number of executions", EnvOrgMaxOpen, maxOpen)
		}
	}
	if err := l.Validate(); err != nil {
		return l, fmt.Errorf("default limits: %s", ErrorMessage(err))
	}
	if l.RatePerSecond > 0 && l.Burst == 0 {
		// A second's worth at once, so a client at the rate is never refused.
		l.Burst = int(math.Ceil(l.RatePerSecond))
	}
	return l, nil
}
