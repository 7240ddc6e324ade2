// Package app holds the use cases of the service: one method per operation,
// called by the HTTP handlers and the CLI alike. It checks the caller's
// scopes; the store checks organizations.
package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Base is what every area of use cases shares: the store, the clock, the
// logger, the observer and the organizations' limits. Each area (areas.go)
// embeds it and adds the dependencies of its own.
type Base struct {
	store       cardflow.Store
	now         func() time.Time
	earlyResume time.Duration
	log         *slog.Logger
	watcher     cardflow.ExecutionWatcher
	// notify is optional: it tells an in-process watcher of the changes
	// the use cases store (local mode); elsewhere waiters poll the store.
	notify cardflow.ExecutionNotifier
	// tenants maps Entra tenant ids to organizations (WithTeamsTenants).
	tenants map[string]string
	// limits enforces the organizations' limits (WithLimits); optional:
	// without it there are none.
	limits *limiter
	// observe hears of executions and answers, for metrics and traces.
	observe cardflow.Observer
}

// Checker validates a workflow version before saveWorkflow stores it, with
// the step kinds of pkg/steps and CEL (engine.Checker does). Only
// WorkflowEditor takes one, so that only what saves workflows links them.
type Checker interface {
	// Validate is the one validation pipeline of a version: its graph,
	// each step's config (no unknown keys), expressions, Teams and SAP
	// profiles and schedule, and the cards and conversations it names,
	// looked up in refs.
	Validate(ctx context.Context, w *cardflow.Workflow, refs cardflow.References) error
}

// CardChecker checks an Adaptive Card before saveCard stores it: the card
// and its template bindings (pkg/cards does). Only CardEditor takes one,
// so that only what saves cards links the card validator.
type CardChecker interface {
	CheckCard(payload map[string]any) error
}

// Option configures a Base.
type Option func(*Base)

// WithClock replaces the wall clock, for tests.
func WithClock(now func() time.Time) Option { return func(s *Base) { s.now = now } }

// WithLogger sets where use cases log what no caller is told (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Base) { s.log = l } }

// WithObserver sets who hears of executions that start and end and of
// answers to cards, for metrics and traces.
func WithObserver(o cardflow.Observer) Option { return func(s *Base) { s.observe = o } }

// WithEarlyResumeWindow sets how long a resume is kept for a wait that is
// not open yet (default 10 minutes); the engine must use the same.
func WithEarlyResumeWindow(d time.Duration) Option { return func(s *Base) { s.earlyResume = d } }

// NewBase returns the Base of the areas over store.
func NewBase(store cardflow.Store, opts ...Option) (*Base, error) {
	if store == nil {
		return nil, errors.New("app: store is nil")
	}
	s := &Base{store: store, now: time.Now, earlyResume: 10 * time.Minute, log: slog.Default(), watcher: pollWatcher{pollFirst, pollMax}, observe: cardflow.NopObserver{}}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		return nil, errors.New("app: logger is nil")
	}
	return s, nil
}

// Store returns the store the areas use.
func (s *Base) Store() cardflow.Store { return s.store }

func (s *Base) millis() int64 { return s.now().UnixMilli() }

// principal returns the caller, who must hold scope.
func principal(ctx context.Context, scope string) (*cardflow.Principal, error) {
	p := cardflow.PrincipalFromContext(ctx)
	if p == nil {
		return nil, cardflow.Errorf(cardflow.EUNAUTHORIZED, "an API key is required in the x-api-key header")
	}
	return p, Authorize(p, scope)
}

// Authorize returns EFORBIDDEN unless p holds scope.
func Authorize(p *cardflow.Principal, scope string) error {
	if !p.Has(scope) {
		return cardflow.Errorf(cardflow.EFORBIDDEN, "this API key lacks the %q scope this operation needs", scope)
	}
	return nil
}
