// Package localrunner is the in-process cardflow.Runner of local mode: one
// goroutine per open execution calls the engine's Advance, sleeps until a
// delay ends, and parks on a wait until it is woken or times out. Everything
// it knows is in the store, so a restarted process picks up every open
// execution with Recover.
package localrunner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
)

// Advancer is the engine, as the runner uses it.
type Advancer interface {
	Advance(ctx context.Context, ref cardflow.ExecutionRef) (engine.Result, error)
}

// Runner runs executions in goroutines.
type Runner struct {
	eng   Advancer
	store cardflow.Store
	log   *slog.Logger
	now   func() time.Time
	after func(time.Duration) <-chan time.Time
	retry time.Duration
	// attempts is how many Advance calls in a row may fail before the
	// runner gives up on the execution (see giveUp).
	attempts int
	// notify hears of the executions the runner itself ends as FAILED.
	notify cardflow.ExecutionNotifier

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]chan struct{} // execution id -> wake signal
	// advancing cancels the Advance call an execution's goroutine is in,
	// so that a cancel stops a step that is still running (an expression,
	// a call) rather than letting it run to its end.
	advancing map[string]context.CancelFunc
	closed    bool
}

var _ cardflow.Runner = (*Runner)(nil)

// Option configures a Runner.
type Option func(*Runner)

// WithLogger sets the logger for failed Advance calls.
func WithLogger(l *slog.Logger) Option { return func(r *Runner) { r.log = l } }

// WithClock replaces the wall clock that timers are set from.
func WithClock(now func() time.Time) Option { return func(r *Runner) { r.now = now } }

// WithTimer replaces time.After, which the runner waits with until a
// WakeAt (a delay's end, a wait's deadline, an approval's reminder); with
// WithClock it lets a test move time on without sleeping.
func WithTimer(after func(time.Duration) <-chan time.Time) Option {
	return func(r *Runner) { r.after = after }
}

// WithNotifier sets who hears of the executions the runner ends itself
// (those it cannot read); the engine tells of every other change.
func WithNotifier(n cardflow.ExecutionNotifier) Option { return func(r *Runner) { r.notify = n } }

// WithRetryDelay sets the first delay after a failed Advance (default 1s);
// it doubles up to a minute.
func WithRetryDelay(d time.Duration) Option { return func(r *Runner) { r.retry = d } }

// DefaultAttempts is how many Advance calls in a row may fail before the
// runner ends the execution as FAILED: with the delays doubling from 1s up
// to a minute, about four minutes of trying, as Step Functions' retries of
// Advance take minutes too.
const DefaultAttempts = 10

// WithAttempts sets how many Advance calls in a row may fail before the
// runner gives up on the execution (default DefaultAttempts).
func WithAttempts(n int) Option { return func(r *Runner) { r.attempts = n } }

// New returns a runner over eng and the store eng runs executions in,
// where the runner finds the open ones and ends those it cannot run.
// Close stops it.
func New(eng Advancer, store cardflow.Store, opts ...Option) (*Runner, error) {
	if eng == nil || store == nil {
		return nil, errors.New("localrunner: engine and store are required")
	}
	r := &Runner{eng: eng, store: store, log: slog.Default(), now: time.Now, after: time.After, retry: time.Second, attempts: DefaultAttempts, running: map[string]chan struct{}{}, advancing: map[string]context.CancelFunc{}}
	for _, o := range opts {
		o(r)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// Recover starts every execution the store has open: after a restart,
// RUNNING ones go on from their last finished step, sleeping ones sleep on,
// waiting ones wait on, and those that cannot be read end as FAILED.
func (r *Runner) Recover(ctx context.Context) (int, error) {
	refs, err := r.store.ListOpenExecutions(ctx)
	if err != nil {
		return 0, err
	}
	for _, ref := range refs {
		if err := r.spawn(ref); err != nil {
			return 0, err
		}
	}
	return len(refs), nil
}

// Start implements cardflow.Runner.
func (r *Runner) Start(_ context.Context, ref cardflow.ExecutionRef) error {
	return r.spawn(ref)
}

// Keep implements cardflow.ExecutionKeeper when the engine does: it keeps
// an execution a trigger just stored for the engine's first Advance.
func (r *Runner) Keep(e *cardflow.Execution) {
	if k, ok := r.eng.(cardflow.ExecutionKeeper); ok {
		k.Keep(e)
	}
}

// Wake implements cardflow.Runner: the execution's goroutine runs Advance
// now, or a new one starts if none runs (after a restart, say).
func (r *Runner) Wake(_ context.Context, ref cardflow.ExecutionRef, _ *cardflow.Wait) error {
	return r.spawn(ref)
}

// Stop implements cardflow.Runner. The execution is already CANCELLED in
// the store: the Advance call its goroutine is in, if any, is cancelled,
// which stops the step it runs, and the goroutine, woken, advances again,
// sees that and ends.
func (r *Runner) Stop(_ context.Context, ref cardflow.ExecutionRef) error {
	r.mu.Lock()
	if cancel, ok := r.advancing[ref.ExecutionID]; ok {
		cancel()
	}
	r.mu.Unlock()
	return r.spawn(ref)
}

// advance calls Advance with a context that Stop cancels, and says whether
// it did.
func (r *Runner) advance(ref cardflow.ExecutionRef) (engine.Result, bool, error) {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	r.mu.Lock()
	r.advancing[ref.ExecutionID] = cancel
	r.mu.Unlock()
	res, err := r.eng.Advance(ctx, ref)
	r.mu.Lock()
	delete(r.advancing, ref.ExecutionID)
	r.mu.Unlock()
	return res, ctx.Err() != nil, err
}

// spawn wakes the execution's goroutine, starting one if needed.
func (r *Runner) spawn(ref cardflow.ExecutionRef) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return cardflow.Errorf(cardflow.EUNAVAILABLE, "the runner is shutting down")
	}
	if wake, ok := r.running[ref.ExecutionID]; ok {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is already pending
		}
		return nil
	}
	wake := make(chan struct{}, 1)
	r.running[ref.ExecutionID] = wake
	r.wg.Add(1)
	go r.loop(ref, wake)
	return nil
}

func (r *Runner) loop(ref cardflow.ExecutionRef, wake chan struct{}) {
	defer r.wg.Done()
	delay, failures := r.retry, 0
	for {
		res, stopped, err := r.advance(ref)
		if r.ctx.Err() != nil {
			return
		}
		if stopped {
			// Stopped by a cancel: the next Advance finds it CANCELLED.
			delay, failures = r.retry, 0
			continue
		}
		var timer <-chan time.Time
		switch {
		case err != nil:
			if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
				r.log.Error("execution vanished", "execution", ref.ExecutionID, "error", err)
				r.done(ref, wake)
				return
			}
			if errors.Is(err, cardflow.ErrUnreadable) {
				// Advancing again would fail the same way, for ever.
				r.failUnreadable(ref)
				if r.done(ref, wake) {
					return
				}
				continue // woken meanwhile: look again
			}
			if failures++; failures >= r.attempts && r.giveUp(ref, failures, err) {
				if r.done(ref, wake) {
					return
				}
				continue
			}
			r.log.Error("advance failed; retrying", "execution", ref.ExecutionID, "retry_in", delay, "error", err)
			timer = time.After(delay)
			delay = min(delay*2, time.Minute)
		case res.Status == cardflow.ExecRunning:
			delay, failures = r.retry, 0
			continue
		case res.Done():
			if r.done(ref, wake) {
				return
			}
			continue // woken while finishing: look again
		default: // waiting or sleeping
			delay, failures = r.retry, 0
			if res.WakeAt > 0 {
				timer = r.after(time.UnixMilli(res.WakeAt).Sub(r.now()) + time.Millisecond)
			}
		}
		select {
		case <-r.ctx.Done():
			return
		case <-wake:
		case <-timer:
		}
	}
}

// failUnreadable ends an execution that cannot go on because a record it
// needs cannot be read. When not even that can be written, the runner
// drops it until the next start; either way it is logged once, by its ids
// only.
func (r *Runner) failUnreadable(ref cardflow.ExecutionRef) {
	ids := []any{"organization", ref.OrganizationID, "workflow", ref.WorkflowID, "execution", ref.ExecutionID}
	ex, err := cardflow.FailUnreadable(r.ctx, r.store, ref, r.now())
	if err != nil {
		r.log.Error("a record of the execution cannot be read, nor could the execution be marked FAILED; the runner drops it until the next start",
			append(ids, "error", cardflow.ErrorMessage(err))...)
		return
	}
	if r.notify != nil {
		r.notify.ExecutionChanged(ref)
	}
	r.log.Warn("a record of the execution cannot be read: the execution has ended", append(ids, "status", ex.Status)...)
}

// done unregisters a finished execution's goroutine, unless a wake-up came
// in meanwhile.
func (r *Runner) done(ref cardflow.ExecutionRef, wake chan struct{}) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-wake:
		return false
	default:
	}
	delete(r.running, ref.ExecutionID)
	return true
}

// Close stops every goroutine and waits for them. Executions stay as the
// store has them; Recover picks them up in the next process.
func (r *Runner) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	return nil
}
