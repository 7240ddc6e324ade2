package app

import (
	"context"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// ScheduleView is the answer of getWorkflowSchedule: a workflow's
// schedule, its state, and its next run times while ACTIVE.
type ScheduleView struct {
	WorkflowID      string   `json:"workflow_id"`
	WorkflowVersion int      `json:"workflow_version"`
	Expression      string   `json:"expression"`
	Timezone        string   `json:"timezone"`
	Status          string   `json:"status"`
	NextRuns        []string `json:"next_runs"`
}

// GetWorkflowSchedule reads the schedule of a workflow (that of its latest
// published version), so that a person sees whether it is paused before
// pausing or playing it.
func (s *Workflows) GetWorkflowSchedule(ctx context.Context, workflowID string) (*ScheduleView, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(workflowID) == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "workflow_id is required")
	}
	list, err := s.store.ListWorkflowSchedules(ctx, p.OrganizationID, workflowID)
	if err != nil {
		return nil, err
	}
	// A publish replaces the schedule; while it does, the newest version's wins.
	var sc *cardflow.Schedule
	for _, x := range list {
		if sc == nil || x.WorkflowVersion > sc.WorkflowVersion {
			sc = x
		}
	}
	if sc == nil {
		return nil, cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s runs on no schedule: its latest published version is triggered by requests, or none is published", workflowID)
	}
	out := &ScheduleView{WorkflowID: sc.WorkflowID, WorkflowVersion: sc.WorkflowVersion, Expression: sc.Expression, Timezone: sc.Timezone, Status: sc.State, NextRuns: []string{}}
	if sc.State == cardflow.ScheduleActive {
		out.NextRuns = NextRuns(sc, s.now(), 3)
	}
	return out, nil
}
