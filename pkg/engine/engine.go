// Package engine interprets workflow graphs. Advance runs an execution's
// synchronous steps one after another, persisting them (a run of local
// steps in one write), until the execution must wait, sleeps, ends or uses
// up its time budget. Runners (local
// goroutines, Step Functions) call Advance again when there is more to do;
// after a crash it continues from the last persisted step.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/secrets"
)

// Sleeping is the Result status of an execution that sleeps in a delay step
// until Result.WakeAt. Its record says WAITING.
const Sleeping = cardflow.Sleeping

// Result tells the runner what to do after Advance.
type Result = cardflow.AdvanceResult

// Defaults.
const (
	DefaultMaxSteps    = 1000
	DefaultEarlyResume = 10 * time.Minute
	// MaxOutputBytes bounds one step's output as JSON, so a step's stored
	// part stays far below a DynamoDB item's 400 KB.
	MaxOutputBytes = 64 << 10
	// MaxLogBytes bounds each input and output in condensed_logs.
	MaxLogBytes = 8 << 10
	// MaxEvents bounds the events kept in an execution's log; Total still
	// counts all of them.
	MaxEvents = 200
)

// Engine runs executions. It is safe for concurrent use, but one execution
// must be advanced by one caller at a time (the runners see to that; the
// store's revisions catch the rest).
type Engine struct {
	store    cardflow.Store
	deliver  cardflow.Deliverer
	env      *expr.Env
	client   *http.Client
	secrets  secrets.Store
	now      func() time.Time
	log      *slog.Logger
	maxSteps int
	budget   time.Duration
	early    time.Duration
	notify   cardflow.ExecutionNotifier
	graphs   sync.Map // graphKey -> *graph
	observe  cardflow.Observer
	kept     kept
}

// Option configures an Engine.
type Option func(*Engine)

// WithClock replaces the wall clock.
func WithClock(now func() time.Time) Option { return func(e *Engine) { e.now = now } }

// WithHTTPClient sets the client of http and erp steps; build it with
// outbound.New, so the deployment's address policy holds.
func WithHTTPClient(c *http.Client) Option { return func(e *Engine) { e.client = c } }

// WithSecrets sets the store secret references resolve in; each execution
// reads its organization's secrets only (secrets.ForOrganization).
func WithSecrets(s secrets.Store) Option { return func(e *Engine) { e.secrets = s } }

// WithNotifier sets who hears of each change of an execution once it is
// stored: the requests that wait for it.
func WithNotifier(n cardflow.ExecutionNotifier) Option { return func(e *Engine) { e.notify = n } }

// WithObserver sets who hears of steps and of executions that end, for
// metrics and traces.
func WithObserver(o cardflow.Observer) Option { return func(e *Engine) { e.observe = o } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.log = l } }

// WithMaxSteps bounds the steps one execution may run (default 1000), so a
// loop in a graph ends.
func WithMaxSteps(n int) Option { return func(e *Engine) { e.maxSteps = n } }

// WithBudget bounds the time of one Advance call; 0 means no bound. A Lambda
// function sets it below its own timeout.
func WithBudget(d time.Duration) Option { return func(e *Engine) { e.budget = d } }

// WithEarlyResumeWindow sets how long a resume that arrives before its wait
// opens is kept (default 10 minutes).
func WithEarlyResumeWindow(d time.Duration) Option { return func(e *Engine) { e.early = d } }

// New returns an engine over store that sends cards through deliver.
func New(store cardflow.Store, deliver cardflow.Deliverer, env *expr.Env, opts ...Option) (*Engine, error) {
	if store == nil || deliver == nil || env == nil {
		return nil, errors.New("engine: store, deliverer and expression environment are required")
	}
	// By default outbound calls reach public addresses only, and secrets
	// come from the environment.
	client, err := outbound.New(outbound.Config{})
	if err != nil {
		return nil, err
	}
	e := &Engine{
		// The bot posts a workflow's cards only into its organization's
		// conversations, whatever delivers them.
		store: store, deliver: cardflow.GuardConversations(store, deliver), env: env,
		client: client, secrets: secrets.Env{}, now: time.Now, log: slog.Default(), observe: cardflow.NopObserver{},
		maxSteps: DefaultMaxSteps, early: DefaultEarlyResume, kept: kept{max: DefaultKeptBytes},
	}
	for _, o := range opts {
		o(e)
	}
	return e, nil
}

// Check validates a workflow version as far as it can without a store:
// its graph, each step's config, its Teams and SAP profiles, and every
// expression and template, so a bad one fails naming the step and
// position.
func (e *Engine) Check(w *cardflow.Workflow) error { return check(e.env, w) }

// Validate is the validation pipeline saveWorkflow runs on a version
// (app.Checker): Check, then that the cards and Teams conversations it
// names are the organization's, looked up in refs.
func (e *Engine) Validate(ctx context.Context, w *cardflow.Workflow, refs cardflow.References) error {
	return validate(ctx, e.env, w, refs)
}

type graphKey struct {
	org, workflow string
	version       int
}

// graph returns the compiled graph of the version an execution runs. An
// ACTIVE version never changes, so compiled graphs are kept.
func (e *Engine) graph(ex *cardflow.Execution) (*graph, error) {
	k := graphKey{ex.OrganizationID, ex.WorkflowID, ex.WorkflowVersion}
	if g, ok := e.graphs.Load(k); ok {
		return g.(*graph), nil
	}
	g, err := compile(e.env, ex.WorkflowDetails.WorkflowSteps, ex.WorkflowDetails.WorkflowConnections)
	if err != nil {
		return nil, fmt.Errorf("workflow %s version %d does not compile: %w", ex.WorkflowID, ex.WorkflowVersion, err)
	}
	e.graphs.Store(k, g)
	return g, nil
}

// Advance runs the execution until it must wait, sleeps, ends or uses up
// the time budget, and says what the runner should do next.
func (e *Engine) Advance(ctx context.Context, ref cardflow.ExecutionRef) (Result, error) {
	start := e.now()
	stepwise := false
	for attempt := 0; ; attempt++ {
		res, err := e.advance(ctx, ref, start, stepwise)
		if errors.Is(err, errStepwise) {
			// Steps stored together would pass the state cap: run them
			// again one write each, so the one that passes it fails.
			stepwise = true
			continue
		}
		// A conflict means someone else changed the execution (a cancel) or
		// its process record (a resume): read them again.
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT && attempt < 5 {
			continue
		}
		return res, err
	}
}

// advance reads the execution and runs it; what its steps did is stored
// before it returns (see run.persist). An open execution whose changes
// are all stored is kept for the next call.
func (e *Engine) advance(ctx context.Context, ref cardflow.ExecutionRef, start time.Time, stepwise bool) (Result, error) {
	ex, err := e.read(ctx, ref)
	if err != nil {
		return Result{}, err
	}
	if !ex.Open() {
		return Result{Status: ex.Status}, nil
	}
	g, err := e.graph(ex)
	if err != nil {
		return Result{}, err
	}
	r := &run{e: e, ex: ex, g: g, stepwise: stepwise}
	res, err := r.steps(ctx, start)
	if err == nil {
		err = r.flush(ctx)
	}
	if err == nil && !r.pending && ex.Open() {
		e.kept.put(ex)
	}
	return res, err
}

// steps runs the steps of the execution until it must wait, sleeps, ends
// or uses up the time budget.
func (r *run) steps(ctx context.Context, start time.Time) (Result, error) {
	e, ex, g := r.e, r.ex, r.g
	for {
		if !r.ex.Open() {
			return Result{Status: r.ex.Status}, nil
		}
		if err := ctx.Err(); err != nil {
			return Result{Status: cardflow.ExecRunning}, nil
		}
		if e.budget > 0 && e.now().Sub(start) >= e.budget {
			return Result{Status: cardflow.ExecRunning}, nil
		}
		n := g.steps[ex.State.StepID]
		if n == nil {
			return Result{}, fmt.Errorf("execution %s is in unknown step %q", ex.WorkflowExecutionID, ex.State.StepID)
		}
		var res *Result
		var err error
		r.remember(n)
		switch ex.State.Phase {
		case cardflow.PhaseWaiting:
			res, err = r.checkWait(ctx, n)
		case cardflow.PhaseSleeping:
			res, err = r.checkSleep(ctx, n)
		default:
			if ex.State.StepsRun >= e.maxSteps {
				err = r.fail(ctx, n, fmt.Sprintf("the execution ran %d steps, the most one execution may run; does the workflow loop?", e.maxSteps))
				break
			}
			res, err = r.runStep(ctx, n)
		}
		if err != nil || res != nil {
			if res != nil {
				return *res, err
			}
			return Result{}, err
		}
	}
}
