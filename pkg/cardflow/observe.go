package cardflow

import (
	"context"
	"time"
)

// Observer hears what executions do, for metrics and traces. It is told
// at a few points only: an execution starts, each step runs, an execution
// ends, a card is answered. Its methods are cheap and never fail the work.
type Observer interface {
	// ExecutionStarting is told before a trigger or scheduled run stores
	// e; it may set e.State.TraceParent, so that every step of e joins the
	// trace. It returns the context the start goes on in.
	ExecutionStarting(ctx context.Context, e *Execution) context.Context
	// ExecutionStarted is told once the start is done, err saying whether
	// it failed.
	ExecutionStarted(ctx context.Context, e *Execution, err error)
	// StepStarted is told as a step of e starts; it returns the context the
	// step runs in and the function to call with the step's outcome
	// ("" for success, else why it failed) when it returns.
	StepStarted(ctx context.Context, e *Execution, stepID, kind string) (context.Context, func(failure string))
	// ExecutionEnded is told once e's final status is stored.
	ExecutionEnded(ctx context.Context, e *Execution)
	// CardAnswered is told when an answer to a card sent waited long
	// counted (an approval's decision), with the answer given.
	CardAnswered(ctx context.Context, org, answer string, waited time.Duration)
	// ApprovalDecided is told as an approval step leaves by its outcome
	// (approved, rejected, timed_out, overridden), with the time from its
	// opening to the decision.
	ApprovalDecided(ctx context.Context, org, outcome string, cycle time.Duration)
}

// NopObserver hears nothing.
type NopObserver struct{}

func (NopObserver) ExecutionStarting(ctx context.Context, _ *Execution) context.Context { return ctx }
func (NopObserver) ExecutionStarted(context.Context, *Execution, error)                 {}
func (NopObserver) StepStarted(ctx context.Context, _ *Execution, _, _ string) (context.Context, func(string)) {
	return ctx, func(string) {}
}
func (NopObserver) ExecutionEnded(context.Context, *Execution)                     {}
func (NopObserver) CardAnswered(context.Context, string, string, time.Duration)    {}
func (NopObserver) ApprovalDecided(context.Context, string, string, time.Duration) {}

// EndsOnWrite reports whether storing e now ends it: its status is final
// and it was open when read or last written (or that is not known).
func (e *Execution) EndsOnWrite() bool {
	if e.Open() {
		return false
	}
	return e.Stored == nil || e.Stored.Status() == ExecRunning || e.Stored.Status() == ExecWaiting
}

// ReopensOnWrite reports whether storing e now opens it again (a redrive):
// its status is open and it was final when read or last written.
func (e *Execution) ReopensOnWrite() bool {
	if !e.Open() || e.Stored == nil {
		return false
	}
	switch e.Stored.Status() {
	case ExecSucceeded, ExecFailed, ExecCancelled, ExecTimedOut:
		return true
	}
	return false
}
