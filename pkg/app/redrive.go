package app

import (
	"context"
	"log/slog"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// RedriveInput is the body of redriveExecution.
type RedriveInput struct {
	WorkflowID          string `json:"workflow_id"`
	WorkflowExecutionID string `json:"workflow_execution_id"`
}

// Redriven is what RedriveExecution answers: the outline of the execution,
// RUNNING again, and the execution itself only to a key that may read
// executions.
type Redriven struct {
	cardflow.ExecutionOutline
	// Execution is the execution with its payloads and logs when the key
	// has the read scope; nil otherwise.
	Execution *cardflow.Execution
}

// RedriveExecution continues a FAILED or TIMED_OUT execution from the step
// it failed in, with the same id: the outputs of the steps before stay,
// its history goes on, and its log records who asked (ExecutionRedriven).
// Any other execution is a conflict and stays as it is. Asking again
// before the redriven execution has run a step answers the same and only
// hands it to the runner again, so a retried request acts once. A redrive
// opens the execution again, so it counts against the organization's cap
// on open executions as a trigger does: at the cap it is refused
// (THROTTLED) and the execution stays as it was.
func (s *Runs) RedriveExecution(ctx context.Context, in RedriveInput) (*Redriven, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	if in.WorkflowID == "" || in.WorkflowExecutionID == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "workflow_id and workflow_execution_id are required")
	}
	capped, err := s.withOpenLimit(ctx, p.OrganizationID)
	if err != nil {
		return nil, err
	}
	for {
		ex, err := s.store.GetExecution(ctx, p.OrganizationID, in.WorkflowID, in.WorkflowExecutionID)
		if err != nil {
			return nil, unreadable(err, "execution %s cannot be read from the store, so it cannot be redriven", in.WorkflowExecutionID)
		}
		if !ex.Redriven() {
			step, err := ex.Redrivable()
			if err != nil {
				return nil, err
			}
			// The process record first: a redrive that stops after it
			// leaves an open record of a failed execution, which the
			// next redrive takes as it is; the other way round it would
			// leave a running execution that no process id resumes.
			before, reopened, err := s.reopenProcess(ctx, ex)
			if err != nil {
				return nil, err
			}
			ex.Redrive(step, p.Actor, s.now())
			// The store counts the execution as open again in the write
			// that opens it, under the cap.
			err = s.store.PutExecution(capped, ex)
			if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
				continue // changed meanwhile (another redrive): look again
			}
			if cardflow.ErrorCode(err) == cardflow.ETHROTTLED {
				s.giveBackProcess(ctx, before, reopened)
				return nil, err
			}
			if err != nil {
				return nil, err
			}
			if s.notify != nil {
				s.notify.ExecutionChanged(ex.Ref())
			}
		}
		// The run is named by the execution and its run number, so a
		// repeated start starts nothing twice.
		if err := s.runner.Start(ctx, ex.RunRef()); err != nil {
			return nil, err
		}
		out := &Redriven{ExecutionOutline: ex.Outline()}
		if p.Has(cardflow.ScopeRead) {
			out.Execution = ex
		}
		return out, nil
	}
}

// reopenProcess makes the process record of ex its own and open again.
// It returns the record as it was and as it wrote it.
func (s *Runs) reopenProcess(ctx context.Context, ex *cardflow.Execution) (before, reopened *cardflow.Process, err error) {
	pid := ex.State.ProcessID
	for {
		proc, err := s.store.GetProcess(ctx, ex.OrganizationID, pid)
		if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
			return nil, nil, cardflow.Errorf(cardflow.ECONFLICT, "the record of process id %s was dropped %d days after execution %s ended, so it can no longer be redriven", pid, int(cardflow.ClosedProcessTTL.Hours()/24), ex.WorkflowExecutionID)
		}
		if err != nil {
			return nil, nil, unreadable(err, "the record of process id %s of execution %s cannot be read from the store, so it cannot be redriven", pid, ex.WorkflowExecutionID)
		}
		old := *proc
		if err := cardflow.ReopenProcess(proc, ex); err != nil {
			return nil, nil, err
		}
		err = s.store.PutProcess(ctx, proc)
		if cardflow.ErrorCode(err) != cardflow.ECONFLICT {
			return &old, proc, err
		}
		// A trigger took the process id meanwhile: look again.
	}
}

// giveBackProcess writes the process record back as it was before a
// redrive that the cap refused, so that the process id is free for a
// trigger again. The write is conditional on the record being as the
// redrive left it: one that another redrive or a trigger wrote meanwhile
// is theirs, and stays.
func (s *Runs) giveBackProcess(ctx context.Context, before, reopened *cardflow.Process) {
	back := *before
	back.Revision = reopened.Revision
	if err := s.store.PutProcess(ctx, &back); err != nil && cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		s.log.Warn("the process record of a refused redrive stays open; the next redrive takes it as it is",
			slog.String("organization_id", back.OrganizationID), slog.String("process_id", back.ProcessID), slog.Any("error", err))
	}
}
