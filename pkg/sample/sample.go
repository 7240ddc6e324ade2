// Package sample loads the demo data that local mode starts with: workflows
// with several versions, a scheduled workflow, adaptive cards, and a
// finished run of the approval workflow with the schema record it leaves,
// so every endpoint has something to show.
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
	// TwoApproverWorkflowID asks Approvers, who must all approve.
	TwoApproverWorkflowID string
}

// Approvers are the approvers of the two-approver workflow.
var Approvers = []string{"ann@example.com", "dan@example.com"}

// Load writes the sample records through svc as the principal of ctx, which
// needs the admin and execute scopes. The sample execution is a run of the
// approval workflow, so svc needs a runner; Load returns once it finished.
func Load(ctx context.Context, svc *app.Service) (IDs, error) {
	var ids IDs
	if cardflow.PrincipalFromContext(ctx) == nil {
		return ids, fmt.Errorf("sample: no principal in context")
	}
	if err := svc.Need(app.AreaCardEditor, app.AreaWorkflowEditor, app.AreaRuns); err != nil {
		return ids, fmt.Errorf("sample: %w", err)
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

	ids.TwoApproverWorkflowID, err = saveWorkflow(ctx, svc, []app.SaveWorkflowInput{twoApproverWorkflow(approvalCard, Approvers)}, 1)
	if err != nil {
		return ids, err
	}

	ids.ExecutionID, err = runExecution(ctx, svc, ids.ApprovalWorkflowID)
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

// The sample run of the approval workflow: a purchase above version 2's
// threshold, approved from Teams.
const (
	runInput  = `{"requester": "Dana Fischer", "item": "Laptop", "amount": 1840.5, "cost_center": "CC-4711"}`
	runAnswer = `{"source": "TEAMS", "decision": "approve", "comment": "Fine, within budget", "responder": "m.keller@example.com"}`
	// runTimeout bounds the wait for the runner; the run takes milliseconds.
	runTimeout = time.Minute
)

// runExecution runs version 2 of the approval workflow as a client would:
// it triggers it, answers its card once it waits, and waits until the
// service's runner has finished it. The execution, its schema record and
// the card in the outbox are what any run leaves.
func runExecution(ctx context.Context, svc *app.Service, workflowID string) (string, error) {
	out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: workflowID, Version: 2, Body: []byte(runInput)})
	if err != nil {
		return "", fmt.Errorf("sample execution: %w", err)
	}
	id := out.ExecutionID
	ex, err := awaitExecution(ctx, svc, workflowID, id, func(e *cardflow.Execution) bool { return e.Status != cardflow.ExecRunning })
	if err != nil {
		return "", err
	}
	if ex.Status != cardflow.ExecWaiting {
		return "", fmt.Errorf("sample execution %s ended as %s before its card: %v", id, ex.Status, ex.WorkflowOutputPayload)
	}
	// The execution waits on its own id: no process id was given.
	if _, err := svc.Resume(ctx, id, []byte(runAnswer)); err != nil {
		return "", fmt.Errorf("sample execution %s: resume: %w", id, err)
	}
	if ex, err = awaitExecution(ctx, svc, workflowID, id, func(e *cardflow.Execution) bool { return !e.Open() }); err != nil {
		return "", err
	}
	if ex.Status != cardflow.ExecSucceeded {
		return "", fmt.Errorf("sample execution %s ended as %s: %v", id, ex.Status, ex.WorkflowOutputPayload)
	}
	return id, nil
}

// awaitExecution reads the execution until done holds for it.
func awaitExecution(ctx context.Context, svc *app.Service, workflowID, id string, done func(*cardflow.Execution) bool) (*cardflow.Execution, error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		ex, err := svc.GetExecution(ctx, workflowID, id)
		if err != nil {
			return nil, fmt.Errorf("sample execution %s: %w", id, err)
		}
		if done(ex) {
			return ex, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("sample execution %s is still %s in %q: %w", id, ex.Status, ex.WorkflowCurrentState, ctx.Err())
		case <-tick.C:
		}
	}
}
