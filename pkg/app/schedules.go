package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cardflow/cardflow/pkg/awscron"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// scheduleOf returns the schedule a workflow version's trigger asks for, or
// nil when it is triggered by requests.
func scheduleOf(w *cardflow.Workflow) (*cardflow.Schedule, error) {
	spec, err := w.Schedule()
	if spec == nil || err != nil {
		return nil, err
	}
	return &cardflow.Schedule{
		OrganizationID: w.OrganizationID, WorkspaceID: w.WorkspaceID,
		WorkflowID: w.WorkflowID, WorkflowVersion: w.WorkflowVersion,
		Expression: spec.Expression, Timezone: spec.Timezone, State: cardflow.ScheduleActive,
	}, nil
}

// schedule gives a just-published version the workflow's schedule: a
// workflow has one schedule, that of its latest published version, or none
// when that version is triggered by requests.
func (s *Workflows) schedule(ctx context.Context, w *cardflow.Workflow) error {
	want, err := scheduleOf(w)
	if err != nil {
		return err
	}
	// A program that runs no schedules (the CLI) publishes only versions
	// without one (Workflows).
	if want != nil && s.scheduler == nil {
		return cardflow.Errorf(cardflow.EUNAVAILABLE, "this deployment runs no schedules")
	}
	old, err := s.store.ListWorkflowSchedules(ctx, w.OrganizationID, w.WorkflowID)
	if err != nil {
		return err
	}
	if want != nil {
		want.CreatedOn, want.ModifiedOn = s.millis(), s.millis()
		if err := s.store.PutSchedule(ctx, want); err != nil {
			return err
		}
		if err := s.scheduler.Put(ctx, want); err != nil {
			return err
		}
	}
	for _, sc := range old {
		if want != nil && sc.WorkflowVersion == want.WorkflowVersion {
			continue
		}
		if s.scheduler != nil {
			if err := s.scheduler.Delete(ctx, sc); err != nil {
				return err
			}
		}
		if err := s.store.DeleteSchedule(ctx, sc.OrganizationID, sc.WorkflowID, sc.WorkflowVersion); err != nil {
			return err
		}
	}
	return nil
}

// ToggleInput is the body of toggleScheduledWorkflow.
type ToggleInput struct {
	WorkflowID      string `json:"workflow_id"`
	WorkflowVersion int    `json:"workflow_version"`
	Action          string `json:"action"`
}

// ToggleOutput is the answer of toggleScheduledWorkflow: openapi.yaml's and the
// next run times while the schedule is ACTIVE.
type ToggleOutput struct {
	Message         string   `json:"message"`
	WorkflowID      string   `json:"workflow_id"`
	WorkflowVersion int      `json:"workflow_version"`
	Status          string   `json:"status"`
	NextRuns        []string `json:"next_runs"`
}

// Toggle pauses (PAUSE) or plays (PLAY) a scheduled workflow version.
// Pausing a paused schedule, or playing an active one, changes nothing.
func (s *Schedules) Toggle(ctx context.Context, in ToggleInput) (*ToggleOutput, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	state := map[string]string{"PAUSE": cardflow.SchedulePaused, "PLAY": cardflow.ScheduleActive}[in.Action]
	if in.WorkflowID == "" || in.WorkflowVersion < 1 || state == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "workflow_id (string), workflow_version (positive number) and action (PAUSE or PLAY) are required")
	}
	sc, err := s.store.GetSchedule(ctx, p.OrganizationID, in.WorkflowID, in.WorkflowVersion)
	if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
		return nil, s.whyNoSchedule(ctx, p.OrganizationID, in.WorkflowID, in.WorkflowVersion)
	}
	if err != nil {
		return nil, err
	}
	if sc.State != state {
		sc.State, sc.ModifiedOn = state, s.millis()
		if err := s.scheduler.Put(ctx, sc); err != nil {
			return nil, err
		}
		if err := s.store.PutSchedule(ctx, sc); err != nil {
			return nil, err
		}
	}
	out := &ToggleOutput{Message: "success", WorkflowID: sc.WorkflowID, WorkflowVersion: sc.WorkflowVersion, Status: sc.State, NextRuns: []string{}}
	if sc.State == cardflow.ScheduleActive {
		out.NextRuns = NextRuns(sc, s.now(), 3)
	}
	return out, nil
}

// whyNoSchedule explains a toggle of a version without a schedule.
func (s *Schedules) whyNoSchedule(ctx context.Context, org, workflowID string, version int) error {
	w, err := s.store.GetWorkflow(ctx, org, workflowID, version)
	if err != nil {
		return err
	}
	want, err := scheduleOf(w)
	if err != nil {
		return err
	}
	if want == nil {
		return cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s version %d is not a scheduled workflow: its trigger is REQUEST", workflowID, version)
	}
	if w.WorkflowStatus != cardflow.StatusActive {
		return cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s version %d is a DRAFT and has no schedule until it is published", workflowID, version)
	}
	return cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s version %d has no schedule: a later published version replaced it", workflowID, version)
}

// NextRuns returns up to n fire times of a schedule after now, RFC 3339 in
// the schedule's time zone.
func NextRuns(sc *cardflow.Schedule, now time.Time, n int) []string {
	out := []string{}
	sched, err := awscron.Parse(sc.Expression, sc.Timezone, awscron.WithStart(time.UnixMilli(sc.CreatedOn)))
	if err != nil {
		return out
	}
	for _, t := range sched.NextN(now, n) {
		out = append(out, t.Format(time.RFC3339))
	}
	return out
}

// ScheduledRunInput is one delivery of a schedule by a scheduler that runs
// outside the service (EventBridge Scheduler): the workflow version it runs
// and when the run was due.
type ScheduledRunInput struct {
	OrganizationID  string
	WorkflowID      string
	WorkflowVersion int
	At              time.Time
}

// ScheduledRunOutput says what a delivery did.
type ScheduledRunOutput struct {
	// ExecutionID is the run's execution, started now or by an earlier
	// delivery of the same run; empty when the delivery started nothing.
	ExecutionID string
	// Skipped says why a delivery started nothing.
	Skipped string
}

// StartScheduledRun starts the run a delivery names, once however often it
// is delivered. Such a scheduler may deliver late, so the schedule as the
// store has it decides: a delivery for a schedule that is paused, or that a
// later version replaced, starts nothing and says why; so does a late one
// for a run due before the schedule's last publish or PLAY, since PLAY
// resumes a schedule from its next run on.
func (s *Runs) StartScheduledRun(ctx context.Context, in ScheduledRunInput) (*ScheduledRunOutput, error) {
	skip := func(format string, args ...any) (*ScheduledRunOutput, error) {
		return &ScheduledRunOutput{Skipped: fmt.Sprintf(format, args...)}, nil
	}
	sc, err := s.store.GetSchedule(ctx, in.OrganizationID, in.WorkflowID, in.WorkflowVersion)
	if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
		return skip("the schedule of workflow %s version %d no longer exists: a later version replaced it, or the workflow's trigger is no longer SCHEDULE", in.WorkflowID, in.WorkflowVersion)
	}
	if err != nil {
		return nil, err
	}
	if sc.State != cardflow.ScheduleActive {
		return skip("the schedule of workflow %s version %d is %s", in.WorkflowID, in.WorkflowVersion, sc.State)
	}
	if in.At.UnixMilli() < sc.ModifiedOn-sc.ModifiedOn%1000 {
		return skip("the run was due at %s, before the schedule of workflow %s version %d was last published or played", in.At.UTC().Format(time.RFC3339), in.WorkflowID, in.WorkflowVersion)
	}
	id, err := s.StartScheduled(ctx, sc, in.At)
	if cardflow.ErrorCode(err) == cardflow.EINVALID {
		// A retry would be refused the same way (a workflow_schema the
		// schedule's input breaks, from before saves checked it).
		return skip("%s", cardflow.ErrorMessage(err))
	}
	if err != nil {
		return nil, err
	}
	return &ScheduledRunOutput{ExecutionID: id}, nil
}

// scheduledInput is the input of the execution a schedule fires at at.
func scheduledInput(sc *cardflow.Schedule, at time.Time) map[string]any {
	return map[string]any{"scheduled_time": at.UTC().Format(time.RFC3339), "expression": sc.Expression, "timezone": sc.Timezone}
}

// StartScheduled starts the execution a schedule fires at at. The fire time
// is the idempotency key, and the execution id derives from it (see
// ScheduledExecutionID), so a repeated delivery starts nothing twice.
func (s *Runs) StartScheduled(ctx context.Context, sc *cardflow.Schedule, at time.Time) (string, error) {
	w, err := s.store.GetWorkflow(ctx, sc.OrganizationID, sc.WorkflowID, sc.WorkflowVersion)
	if err != nil {
		return "", err
	}
	key := "schedule:" + sc.WorkflowID + ":" + at.UTC().Format(time.RFC3339)
	idem := &cardflow.Idempotency{OrganizationID: sc.OrganizationID, Key: key, RequestHash: key}
	if out, err := s.replay(ctx, idem); out != nil || err != nil {
		if out != nil {
			return out.ExecutionID, nil
		}
		return "", err
	}
	id := ScheduledExecutionID(sc.OrganizationID, sc.WorkflowID, at)
	input := scheduledInput(sc, at)
	started, err := s.start(ctx, start{
		workspace: sc.WorkspaceID, actor: "scheduler", requester: "schedule:" + sc.WorkflowID, workflow: w, trigger: cardflow.TriggerSchedule,
		input: input, idem: idem, id: id,
	})
	if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
		// A concurrent or earlier delivery of the same run won; the
		// execution it started is the answer.
		if _, gerr := s.store.GetExecution(ctx, sc.OrganizationID, sc.WorkflowID, id); gerr == nil {
			return id, nil
		}
	}
	return started, err
}

// ScheduledExecutionID returns the id of the execution a workflow's
// schedule starts at at: a ULID whose time is at and whose random part is
// taken from a SHA-256 of organization, workflow and time. Every delivery
// of one run names the same execution (and the Step Functions execution
// named after it), so a repeated delivery cannot start a second one.
func ScheduledExecutionID(org, workflowID string, at time.Time) string {
	sum := sha256.Sum256([]byte(org + "\n" + workflowID + "\n" + at.UTC().Format(time.RFC3339Nano)))
	var id ulid.ULID
	// Neither fails: the time is a ULID time and the entropy 10 bytes.
	_ = id.SetTime(ulid.Timestamp(at))
	_ = id.SetEntropy(sum[:10])
	return id.String()
}
