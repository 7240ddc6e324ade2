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

// Service runs the operations of the service against a store.
type Service struct {
	store       cardflow.Store
	now         func() time.Time
	checker     Checker
	cardChecker CardChecker
	runner      cardflow.Runner
	scheduler   cardflow.Scheduler
	earlyResume time.Duration
	log         *slog.Logger
	watcher     cardflow.ExecutionWatcher
	notify      cardflow.ExecutionNotifier

	// cardExpander expands cards for previewCard (card_preview.go).
	cardExpander CardExpander

	// What answers cards through Teams: the bot's activities and response
	// links.
	botVerifier ActivityVerifier
	botReplier  CardReplier
	links       LinkVerifier
	cardReader  CardReader
	issuer      LinkIssuer
	// deliver sends a sequential approval's card to the next approver.
	deliver cardflow.Deliverer
	// tenants maps Entra tenant ids to organizations (WithTeamsTenants).
	tenants map[string]string
	// limits enforces the organizations' limits (WithLimits).
	limits *limiter
	// observe hears of executions and answers, for metrics and traces.
	observe cardflow.Observer

	// bulkKick wakes the bulk operation workers (WithBulkWorker).
	bulkKick func()
}

// Checker validates a workflow version before saveWorkflow stores it, with
// the step kinds of pkg/steps and CEL (engine.Checker does). It is an
// option so that only what saves workflows links them.
type Checker interface {
	// Validate is the one validation pipeline of a version: its graph,
	// each step's config (no unknown keys), expressions, Teams and SAP
	// profiles and schedule, and the cards and conversations it names,
	// looked up in refs.
	Validate(ctx context.Context, w *cardflow.Workflow, refs cardflow.References) error
}

// CardChecker checks an Adaptive Card before saveCard stores it: the card
// and its template bindings (pkg/cards does). It is an option so that only
// what saves cards links the card validator.
type CardChecker interface {
	CheckCard(payload map[string]any) error
}

// Option configures a Service.
type Option func(*Service)

// WithClock replaces the wall clock, for tests.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithChecker sets the workflow checker saveWorkflow runs; without one,
// saveWorkflow fails and stores nothing.
func WithChecker(c Checker) Option { return func(s *Service) { s.checker = c } }

// WithCardChecker sets the card checker saveCard runs; without one,
// saveCard fails and stores nothing.
func WithCardChecker(c CardChecker) Option { return func(s *Service) { s.cardChecker = c } }

// WithLogger sets where use cases log what no caller is told (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithObserver sets who hears of executions that start and end and of
// answers to cards, for metrics and traces.
func WithObserver(o cardflow.Observer) Option { return func(s *Service) { s.observe = o } }

// WithRunner sets the runner that executions start on.
func WithRunner(r cardflow.Runner) Option { return func(s *Service) { s.runner = r } }

// WithScheduler sets the scheduler of scheduled workflows.
func WithScheduler(sc cardflow.Scheduler) Option { return func(s *Service) { s.scheduler = sc } }

// WithEarlyResumeWindow sets how long a resume is kept for a wait that is
// not open yet (default 10 minutes); the engine must use the same.
func WithEarlyResumeWindow(d time.Duration) Option { return func(s *Service) { s.earlyResume = d } }

// New returns a Service over store.
func New(store cardflow.Store, opts ...Option) (*Service, error) {
	if store == nil {
		return nil, errors.New("app: store is nil")
	}
	s := &Service{store: store, now: time.Now, earlyResume: 10 * time.Minute, log: slog.Default(), watcher: pollWatcher{pollFirst, pollMax}, observe: cardflow.NopObserver{}}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		return nil, errors.New("app: logger is nil")
	}
	if s.deliver != nil {
		s.deliver = cardflow.GuardConversations(store, s.deliver)
	}
	return s, nil
}

// Store returns the service's store.
func (s *Service) Store() cardflow.Store { return s.store }

func (s *Service) millis() int64 { return s.now().UnixMilli() }

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
