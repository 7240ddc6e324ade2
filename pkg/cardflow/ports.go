package cardflow

import (
	"context"
	"time"
)

// The ports the engine and the use cases reach infrastructure through,
// besides Store (store.go) and the stores it is made of. Each adapter
// passes its port's contract suite (docs/ARCHITECTURE.md).

// EngineStore persists what running executions need besides their records.
// Adapters of Store implement it too; the contract suite covers it.
type EngineStore interface {
	// StartExecution creates an execution together with its process record
	// and, when idem is not nil, its idempotency record, in one atomic
	// change. ECONFLICT when the process id belongs to an open execution or
	// the idempotency key is taken (and not expired at e.CreatedOn).
	StartExecution(ctx context.Context, e *Execution, p *Process, idem *Idempotency) error
	// StartExecutionWithSample is StartExecution that also stores sc,
	// when not nil, as PutSchema does, in the same atomic change: a
	// trigger stores its schema sample without a second write, and a
	// start that fails stores no sample. A sample PutSchema would refuse
	// is left out and the start goes on.
	StartExecutionWithSample(ctx context.Context, e *Execution, p *Process, idem *Idempotency, sc *Schema) error
	// GetProcess returns the record of a process id.
	GetProcess(ctx context.Context, org, processID string) (*Process, error)
	// PutProcess replaces a process record if its stored revision equals
	// p.Revision, and increments p.Revision; ECONFLICT otherwise.
	PutProcess(ctx context.Context, p *Process) error
	// GetIdempotency returns an idempotency record; ENOTFOUND when there is
	// none or it expired before now (epoch ms).
	GetIdempotency(ctx context.Context, org, key string, now int64) (*Idempotency, error)
	// ListOpenExecutions returns every RUNNING or WAITING execution of every
	// organization. The local runner calls it at start-up; it is on no
	// request path.
	ListOpenExecutions(ctx context.Context) ([]ExecutionRef, error)

	// PutSchedule creates or replaces the schedule of a workflow version.
	PutSchedule(ctx context.Context, s *Schedule) error
	// GetSchedule returns the schedule of a workflow version.
	GetSchedule(ctx context.Context, org, workflowID string, version int) (*Schedule, error)
	// ListWorkflowSchedules returns the schedules of one workflow.
	ListWorkflowSchedules(ctx context.Context, org, workflowID string) ([]*Schedule, error)
	// DeleteSchedule removes a schedule; removing a missing one is not an
	// error.
	DeleteSchedule(ctx context.Context, org, workflowID string, version int) error
	// ListSchedules returns the schedules of every organization, for the
	// local scheduler's start-up; it is on no request path.
	ListSchedules(ctx context.Context) ([]*Schedule, error)

	// Housekeeping: lists across organizations, on no request path. Each
	// returns at most limit records, the most overdue first.

	// ListOverdueWaits returns process records whose open wait is
	// unclaimed and has a deadline at or before now (epoch ms).
	ListOverdueWaits(ctx context.Context, now int64, limit int) ([]*Process, error)
	// ListStaleEarlyResumes returns open process records that hold an
	// early resume received at or before before (epoch ms).
	ListStaleEarlyResumes(ctx context.Context, before int64, limit int) ([]*Process, error)
	// DeleteExpiredProcesses deletes closed process records whose
	// ExpiresAt is at or before now (epoch ms) and reports how many.
	DeleteExpiredProcesses(ctx context.Context, now int64, limit int) (int, error)
	// DeleteExpiredIdempotency deletes idempotency records whose ExpiresAt
	// is at or before now (epoch ms) and reports how many.
	DeleteExpiredIdempotency(ctx context.Context, now int64, limit int) (int, error)
}

// Runner drives executions on: it calls the engine's Advance until an
// execution ends, sleeps or waits, and wakes it when its wait is claimed.
// Every adapter passes the contract suite in internal/runnertest.
type Runner interface {
	// Start begins running a stored execution.
	Start(ctx context.Context, ref ExecutionRef) error
	// Wake continues an execution whose wait was claimed, by a resume or by
	// its deadline. w is the claimed wait, with the runner's token.
	Wake(ctx context.Context, ref ExecutionRef, w *Wait) error
	// Stop ends the run of a cancelled execution.
	Stop(ctx context.Context, ref ExecutionRef) error
}

// ExecutionKeeper is a Runner, or an engine, that can take an execution as
// it was just stored (by a trigger), so that its first Advance need not
// read it back. What it keeps is checked against the stored revision
// before use. Runners need not implement it.
type ExecutionKeeper interface {
	Keep(e *Execution)
}

// Scheduler fires scheduled workflows. Every adapter passes the contract
// suite in internal/schedulertest.
type Scheduler interface {
	// Put creates or updates the schedule; a PAUSED schedule stays but
	// does not fire.
	Put(ctx context.Context, s *Schedule) error
	// Delete removes the schedule; removing a missing one is not an error.
	Delete(ctx context.Context, s *Schedule) error
}

// Deliverer sends the cards of card steps.
type Deliverer interface {
	Deliver(ctx context.Context, d *Delivery) error
}

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
