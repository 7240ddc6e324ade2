package samlocal

import (
	"context"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// seedTimedOut records an execution of the approval workflow whose card
// timed out with nobody answering, as the engine leaves one: TIMED_OUT in
// the card step, its process record closed. It returns its id.
func (f *Fixture) seedTimedOut(ctx context.Context, svc *app.Service, now time.Time) (string, error) {
	id, _, err := f.seedWaiting(ctx, svc, now)
	if err != nil {
		return "", err
	}
	ex, err := svc.Store().GetExecution(ctx, Organization, f.ApprovalWorkflowID, id)
	if err != nil {
		return "", err
	}
	if err := cardflow.CloseProcess(ctx, svc.Store(), ex, now); err != nil {
		return "", err
	}
	ms := now.UnixMilli()
	reason := "no answer within P3D"
	ex.Status = cardflow.ExecTimedOut
	ex.WorkflowOutputPayload = map[string]any{"error": reason, "step": "approve"}
	ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events,
		cardflow.Event{At: ms, Type: cardflow.EventTimedOut, StepID: "approve", Step: ex.WorkflowCurrentState, Message: reason})
	ex.WorkflowEventLog.Total++
	ex.State = cardflow.ExecutionState{ProcessID: ex.State.ProcessID, Outputs: ex.State.Outputs, FailedStep: "approve"}
	return id, svc.Store().PutExecution(ctx, ex)
}
