package schedules

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/ebscheduler"
)

// Target is the handler of the function that schedules invoke: it starts
// the run a delivery names, once however often it is delivered.
type Target struct {
	runs *app.Runs
	log  *slog.Logger
}

// NewTarget returns the target over the Runs area; log gets
// the deliveries that start nothing.
func NewTarget(runs *app.Runs, log *slog.Logger) (*Target, error) {
	if runs == nil || log == nil {
		return nil, errors.New("schedules: the target needs runs (a runner) and a logger")
	}
	return &Target{runs: runs, log: log}, nil
}

// TargetOutput says what a delivery did.
type TargetOutput struct {
	// Started is set when the run has its execution: started now, or by an
	// earlier delivery of the same run.
	Started     bool   `json:"started"`
	ExecutionID string `json:"workflow_execution_id,omitempty"`
	// Reason says why a delivery started nothing.
	Reason string `json:"reason,omitempty"`
}

// Handle starts the execution of the run in (see app's StartScheduledRun).
// An error asks EventBridge Scheduler for the delivery again.
func (t *Target) Handle(ctx context.Context, in ebscheduler.TargetInput) (TargetOutput, error) {
	at, err := time.Parse(time.RFC3339, in.ScheduledTime)
	if err != nil || at.Unix() <= 0 {
		return TargetOutput{}, cardflow.Errorf(cardflow.EINVALID, "scheduled_time %q is not an RFC 3339 time", in.ScheduledTime)
	}
	if in.OrganizationID == "" || in.WorkflowID == "" || in.WorkflowVersion < 1 {
		return TargetOutput{}, cardflow.Errorf(cardflow.EINVALID, "organization_id, workflow_id and workflow_version (a positive number) are required")
	}
	out, err := t.runs.StartScheduledRun(ctx, app.ScheduledRunInput{
		OrganizationID: in.OrganizationID, WorkflowID: in.WorkflowID, WorkflowVersion: in.WorkflowVersion, At: at,
	})
	if err != nil {
		return TargetOutput{}, err
	}
	if out.Skipped != "" {
		t.log.InfoContext(ctx, "scheduled run not started", slog.String("organization", in.OrganizationID),
			slog.String("workflow", in.WorkflowID), slog.String("scheduled_time", in.ScheduledTime), slog.String("reason", out.Skipped))
		return TargetOutput{Reason: out.Skipped}, nil
	}
	return TargetOutput{Started: true, ExecutionID: out.ExecutionID}, nil
}
