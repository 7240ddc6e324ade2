package ebscheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Target is what the Lambda function that schedules invoke does: it starts
// the run a delivery names, once however often it is delivered.
type Target struct {
	svc *app.Service
	log *slog.Logger
}

// TargetOption configures NewTarget.
type TargetOption func(*Target)

// WithTargetLogger sets where deliveries that start nothing are logged
// (default slog.Default()).
func WithTargetLogger(l *slog.Logger) TargetOption { return func(t *Target) { t.log = l } }

// NewTarget returns the target over a service that has a runner.
func NewTarget(svc *app.Service, opts ...TargetOption) (*Target, error) {
	if svc == nil {
		return nil, errors.New("ebscheduler: service is nil")
	}
	t := &Target{svc: svc, log: slog.Default()}
	for _, o := range opts {
		o(t)
	}
	if t.log == nil {
		return nil, errors.New("ebscheduler: logger is nil")
	}
	return t, nil
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

// Handle starts the execution of the run in. A delivery for a schedule
// that is paused, or that a later version replaced, starts nothing and
// says why; so does a late one for a run due before the schedule's last
// publish or PLAY, since PLAY resumes a schedule from its next run on. An
// error asks for the delivery again.
func (t *Target) Handle(ctx context.Context, in TargetInput) (TargetOutput, error) {
	at, err := time.Parse(time.RFC3339, in.ScheduledTime)
	if err != nil || at.Unix() <= 0 {
		return TargetOutput{}, cardflow.Errorf(cardflow.EINVALID, "scheduled_time %q is not an RFC 3339 time", in.ScheduledTime)
	}
	if in.OrganizationID == "" || in.WorkflowID == "" || in.WorkflowVersion < 1 {
		return TargetOutput{}, cardflow.Errorf(cardflow.EINVALID, "organization_id, workflow_id and workflow_version (a positive number) are required")
	}
	sc, err := t.svc.Store().GetSchedule(ctx, in.OrganizationID, in.WorkflowID, in.WorkflowVersion)
	if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
		return t.skip(in, "the schedule of workflow %s version %d no longer exists: a later version replaced it, or the workflow's trigger is no longer SCHEDULE", in.WorkflowID, in.WorkflowVersion)
	}
	if err != nil {
		return TargetOutput{}, err
	}
	if sc.State != cardflow.ScheduleActive {
		return t.skip(in, "the schedule of workflow %s version %d is %s", in.WorkflowID, in.WorkflowVersion, sc.State)
	}
	if at.UnixMilli() < sc.ModifiedOn-sc.ModifiedOn%1000 {
		return t.skip(in, "the run was due at %s, before the schedule of workflow %s version %d was last published or played", in.ScheduledTime, in.WorkflowID, in.WorkflowVersion)
	}
	id, err := t.svc.StartScheduled(ctx, sc, at)
	if err != nil {
		return TargetOutput{}, err
	}
	return TargetOutput{Started: true, ExecutionID: id}, nil
}

// skip answers a delivery that starts nothing.
func (t *Target) skip(in TargetInput, format string, args ...any) (TargetOutput, error) {
	reason := fmt.Sprintf(format, args...)
	t.log.Info("scheduled run not started", slog.String("organization", in.OrganizationID),
		slog.String("workflow", in.WorkflowID), slog.String("scheduled_time", in.ScheduledTime), slog.String("reason", reason))
	return TargetOutput{Reason: reason}, nil
}
