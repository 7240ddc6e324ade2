package runnertest

import (
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// testApprovalOverride: resumeworkflow cannot pass an approval step; an
// admin's override wakes the runner, and the step leaves by the
// decision's exit.
func testApprovalOverride(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	w, err := h.Service.GetWorkflow(ctx, approval(t, h, ctx), 1)
	if err != nil {
		t.Fatal(err)
	}
	ask := step("ask", cardflow.StepApproval, obj{"card_id": w.WorkflowSteps[1].Config["card_id"], "approvers": []any{"ann@example.com"}, "policy": "first", "timeout": "P1D"})
	wf := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}), ask,
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.ask.output.outcome }}"}),
		step("no", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.ask.output.outcome + ' ' + steps.ask.output.decision }}"}),
	}, []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}, {From: "ask", To: "no", On: cardflow.ExitRejected}})
	id := trigger(t, h, ctx, wf, "override-1", obj{"amount": 1})
	await(t, h, ctx, wf, id, cardflow.ExecWaiting)
	approvalID := cardflow.ApprovalIDOf(id, 1)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := h.Store.GetApproval(ctx, cardflow.PrincipalFromContext(ctx).OrganizationID, approvalID); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("approval %s: %v", approvalID, err)
		}
	}
	if _, err := h.Service.Resume(ctx, "override-1", []byte(`{"source": "TEAMS", "decision": "approve"}`)); cardflow.ErrorCode(err) != cardflow.EFORBIDDEN {
		t.Errorf("resume of an approval step: got %v, want FORBIDDEN", err)
	}
	if _, err := h.Service.OverrideApproval(ctx, app.OverrideApprovalInput{ApprovalID: approvalID, Decision: cardflow.DecisionReject, Reason: "withdrawn"}); err != nil {
		t.Fatalf("override: %v", err)
	}
	ex := await(t, h, ctx, wf, id, cardflow.ExecSucceeded, cardflow.ExecFailed)
	if got, want := ex.Status+" "+outputJSON(ex), `SUCCEEDED "overridden reject"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
