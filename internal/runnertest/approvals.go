package runnertest

import (
	"context"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// testApprovalOfWhoTriggered: bob triggers an approval that names someone
// else as requester; the execution records bob, who may not approve, and
// a cancel closes the approval, which then takes no answer.
func testApprovalOfWhoTriggered(t *testing.T, h Harness) {
	org := "org-" + cardflow.NewID(time.Now())
	ctx := ctxOf(org)
	as := func(person string) context.Context {
		return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
			OrganizationID: org, WorkspaceID: org + "-ws", Scopes: cardflow.AllScopes, Actor: person, Person: person, KeyID: "k-" + person,
		})
	}
	c, err := h.Service.SaveCard(ctx, app.SaveCardInput{CardName: "approve", CardPayload: obj{
		"type": "AdaptiveCard", "version": "1.5", "body": []any{obj{"type": "TextBlock", "text": "Approve ${amount}?"}},
	}})
	if err != nil {
		t.Fatalf("save card: %v", err)
	}
	if _, err := h.Service.PublishCard(ctx, c.CardID, c.CardVersion); err != nil {
		t.Fatalf("publish card: %v", err)
	}
	wf := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("ask", "approval", obj{"card_id": c.CardID, "data": obj{"amount": "{{ input.amount }}"}, "timeout": "P1D",
			"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "first", "forbid_self_approval": "{{ input.requester }}"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
	}, []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}})
	id := trigger(t, h, as("bob@example.com"), wf, "", obj{"amount": 1, "requester": "someone-else@example.com"})
	if ex := await(t, h, ctx, wf, id, cardflow.ExecWaiting); ex.TriggeredBy != "bob@example.com" {
		t.Errorf("triggered_by: got %q, want bob@example.com", ex.TriggeredBy)
	}
	approvalID := cardflow.ApprovalIDOf(id, 1)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := h.Store.GetApproval(ctx, org, approvalID); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("approval %s: not there in time", approvalID)
		}
	}
	answer := func(person string) error {
		_, err := h.Service.AnswerApproval(as(person), app.AnswerApprovalInput{ApprovalID: approvalID, Decision: cardflow.DecisionApprove})
		return err
	}
	if err := answer("bob@example.com"); cardflow.ErrorCode(err) != cardflow.EFORBIDDEN {
		t.Errorf("bob approves his own request: got %v, want FORBIDDEN", err)
	}
	if _, err := h.Service.Cancel(ctx, app.CancelInput{WorkflowID: wf, WorkflowExecutionID: id}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	a, err := h.Store.GetApproval(ctx, org, approvalID)
	if err != nil || a.Status != cardflow.ApprovalCancelled || len(a.Answers) != 0 {
		t.Fatalf("approval after the cancel: got %+v, %v; want CANCELLED without answers", a, err)
	}
	if err := answer("ann@example.com"); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		t.Errorf("ann approves after the cancel: got %v, want CONFLICT", err)
	}
	if after, err := h.Store.GetApproval(ctx, org, approvalID); err != nil || after.Revision != a.Revision {
		t.Errorf("approval after ann's answer: got %+v, %v; want it unchanged", after, err)
	}
	if got := await(t, h, ctx, wf, id, cardflow.ExecCancelled, cardflow.ExecSucceeded); got.Status != cardflow.ExecCancelled {
		t.Errorf("after the cancel the execution became %s", got.Status)
	}
}
