package cardflow

import (
	"context"
	"time"
)

// GiveUp ends as FAILED the open execution ref, which its runner gave up
// on: Advance failed every time it was tried, its retries are used up, and
// without this the record would say RUNNING for ever. reason says why, in
// words fit for the execution's readers (no internals). The step it was
// in is the one a redrive runs again. An execution that has finished
// meanwhile stays as it is. It returns the execution as it now is.
func GiveUp(ctx context.Context, s Store, ref ExecutionRef, reason string, now time.Time) (*Execution, error) {
	for {
		ex, err := s.GetExecution(ctx, ref.OrganizationID, ref.WorkflowID, ref.ExecutionID)
		if err != nil {
			return nil, err
		}
		if !ex.Open() {
			return ex, nil
		}
		if err := CloseProcess(ctx, s, ex, now); err != nil {
			return nil, err
		}
		ms, wait := now.UnixMilli(), ex.State.Wait
		ex.Status, ex.ModifiedOn = ExecFailed, max(ms, ex.ModifiedOn+1)
		ex.WorkflowOutputPayload = map[string]any{"error": reason, "step": ex.State.StepID}
		ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events,
			Event{At: ms, Type: EventFailed, StepID: ex.State.StepID, Step: ex.WorkflowCurrentState, Message: reason})
		ex.WorkflowEventLog.Total++
		ex.State.FailedStep = ex.State.StepID
		ex.State.StepID, ex.State.Phase, ex.State.WakeAt, ex.State.Wait = "", "", 0, 0
		err = s.PutExecution(ctx, ex)
		if err == nil {
			// The execution has ended; an answer closes an approval
			// this leaves open.
			_ = CancelApproval(ctx, s, nil, ex, wait, now)
			return ex, nil
		}
		if ErrorCode(err) != ECONFLICT {
			return nil, err
		}
		// The execution moved on meanwhile (a cancel, a resume): look again.
	}
}
