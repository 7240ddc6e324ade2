// Package sample loads the demo data that local mode starts with: workflows
// with several versions, a scheduled workflow, adaptive cards, an execution
// record and a schema record, so every endpoint has something to show.
package sample

import (
	"context"
	"fmt"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// IDs are the ids of the loaded records, for the README's examples.
type IDs struct {
	ApprovalWorkflowID string
	ScheduleWorkflowID string
	OnboardingWorkflow string
	ApprovalCardID     string
	ExecutionID        string
}

// Load writes the sample records through svc as the principal of ctx, which
// needs the admin scope.
func Load(ctx context.Context, svc *app.Service, now time.Time) (IDs, error) {
	var ids IDs
	p := cardflow.PrincipalFromContext(ctx)
	if p == nil {
		return ids, fmt.Errorf("sample: no principal in context")
	}

	approvalCard, err := saveCard(ctx, svc, "Purchase approval", []map[string]any{
		approvalCardPayload("Purchase request"),
		approvalCardPayload("Purchase request for ${requester}"),
		approvalCardPayload("Purchase request: ${item}"),
	}, 2)
	if err != nil {
		return ids, err
	}
	ids.ApprovalCardID = approvalCard
	if _, err := saveCard(ctx, svc, "Invoice exception", []map[string]any{invoiceCardPayload()}, 1); err != nil {
		return ids, err
	}
	onboardingCard, err := saveCard(ctx, svc, "Vendor onboarding", []map[string]any{onboardingCardPayload(false), onboardingCardPayload(true)}, 2)
	if err != nil {
		return ids, err
	}

	ids.ApprovalWorkflowID, err = saveWorkflow(ctx, svc, []app.SaveWorkflowInput{
		approvalWorkflow(approvalCard, 500), approvalWorkflow(approvalCard, 1000), approvalWorkflow(approvalCard, 2500),
	}, 2)
	if err != nil {
		return ids, err
	}
	ids.ScheduleWorkflowID, err = saveWorkflow(ctx, svc, []app.SaveWorkflowInput{scheduledWorkflow("cron(0 8 ? * MON-FRI *)"), scheduledWorkflow("cron(0 7 ? * MON-FRI *)")}, 1)
	if err != nil {
		return ids, err
	}
	ids.OnboardingWorkflow, err = saveWorkflow(ctx, svc, []app.SaveWorkflowInput{onboardingWorkflow(onboardingCard)}, 0)
	if err != nil {
		return ids, err
	}

	ids.ExecutionID, err = loadExecution(ctx, svc, p, ids.ApprovalWorkflowID, now)
	return ids, err
}

// saveCard saves each payload as a version and publishes versions 1 to
// publish, the last of them ending up latest.
func saveCard(ctx context.Context, svc *app.Service, name string, payloads []map[string]any, publish int) (string, error) {
	var id string
	for _, payload := range payloads {
		c, err := svc.SaveCard(ctx, app.SaveCardInput{CardID: id, CardName: name, CardPayload: payload})
		if err != nil {
			return "", fmt.Errorf("sample card %q: %w", name, err)
		}
		id = c.CardID
	}
	for v := 1; v <= publish; v++ {
		if _, err := svc.PublishCard(ctx, id, v); err != nil {
			return "", fmt.Errorf("sample card %q: %w", name, err)
		}
	}
	return id, nil
}

// saveWorkflow is saveCard for workflows.
func saveWorkflow(ctx context.Context, svc *app.Service, versions []app.SaveWorkflowInput, publish int) (string, error) {
	var id string
	for _, in := range versions {
		in.WorkflowID = id
		w, err := svc.SaveWorkflow(ctx, in)
		if err != nil {
			return "", fmt.Errorf("sample workflow %q: %w", in.WorkflowName, err)
		}
		id = w.WorkflowID
	}
	for v := 1; v <= publish; v++ {
		if _, err := svc.PublishWorkflow(ctx, id, v); err != nil {
			return "", fmt.Errorf("sample workflow %q: %w", id, err)
		}
	}
	return id, nil
}

// loadExecution records one finished run of the approval workflow and the
// schema inferred from its input, as the engine writes them.
func loadExecution(ctx context.Context, svc *app.Service, p *cardflow.Principal, workflowID string, now time.Time) (string, error) {
	w, err := svc.GetWorkflow(ctx, workflowID, 2)
	if err != nil {
		return "", err
	}
	start := now.Add(-26 * time.Hour).UnixMilli()
	at := func(d time.Duration) int64 { return start + d.Milliseconds() }
	input := map[string]any{"requester": "Dana Fischer", "item": "Laptop", "amount": 1840.5, "cost_center": "CC-4711"}
	decision := map[string]any{"source": "TEAMS", "decision": "approve", "comment": "Fine, within budget", "responder": "m.keller@example.com"}
	by := "sample"
	e := &cardflow.Execution{
		WorkflowExecutionID:  cardflow.NewID(time.UnixMilli(start)),
		WorkflowID:           workflowID,
		WorkflowVersion:      w.WorkflowVersion,
		OrganizationID:       p.OrganizationID,
		WorkspaceID:          p.WorkspaceID,
		WorkflowCurrentState: "Approved",
		WorkflowTriggerType:  cardflow.TriggerRequest,
		Status:               cardflow.ExecSucceeded,
		WorkflowEventLog: cardflow.EventLog{Total: 9, Events: []cardflow.Event{
			{At: at(0), Type: "EXECUTION_STARTED"},
			{At: at(0), Type: "STEP_FINISHED", StepID: "start", Step: "Request received"},
			{At: at(time.Millisecond), Type: "STEP_FINISHED", StepID: "check", Step: "Amount check", Message: "input.amount > 1000"},
			{At: at(2 * time.Millisecond), Type: "STEP_STARTED", StepID: "approve", Step: "Manager approval"},
			{At: at(3 * time.Millisecond), Type: "WAITING", StepID: "approve", Step: "Manager approval", Message: "card delivered"},
			{At: at(2 * time.Hour), Type: "RESUMED", StepID: "approve", Step: "Manager approval", Message: "source TEAMS"},
			{At: at(2 * time.Hour), Type: "STEP_FINISHED", StepID: "approve", Step: "Manager approval"},
			{At: at(2 * time.Hour), Type: "STEP_FINISHED", StepID: "done", Step: "Approved"},
			{At: at(2 * time.Hour), Type: "EXECUTION_SUCCEEDED"},
		}},
		CondensedLogs: map[string]cardflow.StepLog{
			"start":   {Input: input, Output: input, Status: "SUCCEEDED", StartedOn: at(0), FinishedOn: at(0)},
			"check":   {Input: input, Output: map[string]any{"next": "approve"}, Status: "SUCCEEDED", StartedOn: at(0), FinishedOn: at(time.Millisecond)},
			"approve": {Input: map[string]any{"amount": 1840.5, "requester": "Dana Fischer"}, Output: decision, Status: "SUCCEEDED", StartedOn: at(2 * time.Millisecond), FinishedOn: at(2 * time.Hour)},
			"done":    {Input: decision, Output: decision, Status: "SUCCEEDED", StartedOn: at(2 * time.Hour), FinishedOn: at(2 * time.Hour)},
		},
		WorkflowInputPayload:  input,
		WorkflowOutputPayload: decision,
		WorkflowDetails:       cardflow.WorkflowDetails{WorkflowName: w.WorkflowName, WorkflowSteps: w.WorkflowSteps, WorkflowConnections: w.WorkflowConnections},
		ModifiedBy:            &by,
		CreatedOn:             start,
		ModifiedOn:            at(2 * time.Hour),
	}
	store := svc.Store()
	if err := store.CreateExecution(ctx, e); err != nil {
		return "", err
	}
	schema := &cardflow.Schema{
		OrganizationID:      p.OrganizationID,
		WorkflowID:          workflowID,
		WorkflowVersion:     w.WorkflowVersion,
		WorkflowMockPayload: input,
		WorkflowSchema: map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object",
			"properties": map[string]any{
				"requester":   map[string]any{"type": "string"},
				"item":        map[string]any{"type": "string"},
				"amount":      map[string]any{"type": "number"},
				"cost_center": map[string]any{"type": "string"},
			},
			"required": []any{"amount", "cost_center", "item", "requester"},
		},
		CreatedBy:  by,
		CreatedOn:  e.ModifiedOn,
		ModifiedOn: e.ModifiedOn,
	}
	if err := store.PutSchema(ctx, schema); err != nil {
		return "", err
	}
	return e.WorkflowExecutionID, nil
}
