package sfnrunner_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/sfnfake"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// until polls cond while the state machine runs.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, what, cond)
}

// TestApprovalOnStepFunctions runs an approval step on the Step Functions
// runner (the fake running the real definition and handlers): answers
// through the API count, the reminder fires when Park's timeout, set to
// the reminder's time, ends the task, a reassignment wakes the parked
// task so the new approver gets the card, and the last answer decides.
func TestApprovalOnStepFunctions(t *testing.T) {
	store := boltStore(t, "cardflow.db")
	st := newStack(t, store, store)
	svc := st.harness.Service
	org, as, wf := publishApprovalWorkflow(t, svc, map[string]any{
		"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all", "allow_reassign": true,
		"reminders": []any{"PT1S"}, "timeout": "PT1H",
	})
	admin := as("admin@example.com")
	out, err := svc.Trigger(admin, app.TriggerInput{WorkflowID: wf, ProcessID: "PO-1", Body: []byte(`{"amount": 500}`)})
	if err != nil {
		t.Fatal(err)
	}
	approvalID := cardflow.ApprovalIDOf(out.ExecutionID, 1)
	parked := func() bool {
		p, err := store.GetProcess(context.Background(), org, "PO-1")
		return err == nil && p.Wait != nil && p.Wait.Token != ""
	}
	until(t, "the park task", parked)
	if _, err := svc.AnswerApproval(as("ann@example.com"), app.AnswerApprovalInput{ApprovalID: approvalID, Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	sent := func() []string {
		ds, _, err := store.ListDeliveries(context.Background(), org, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, strings.TrimSpace(d.Notice+" "+d.Approver))
		}
		slices.Sort(out)
		return out
	}
	until(t, "the reminder", func() bool { return slices.Contains(sent(), "reminder bob@example.com") })
	until(t, "the park task after the reminder", parked)
	if _, err := svc.ReassignApproval(as("bob@example.com"), app.ReassignApprovalInput{ApprovalID: approvalID, To: "cy@example.com"}); err != nil {
		t.Fatal(err)
	}
	until(t, "the card of the new approver", func() bool { return slices.Contains(sent(), "added cy@example.com") })
	if got, want := sent(), []string{"added cy@example.com", "ann@example.com", "bob@example.com", "reminder bob@example.com"}; !slices.Equal(got, want) {
		t.Errorf("cards: got %q, want %q", got, want)
	}
	if _, err := svc.AnswerApproval(as("cy@example.com"), app.AnswerApprovalInput{ApprovalID: approvalID, Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	c := awaitMachine(t, st.fake, out.ExecutionID)
	ex, err := store.GetExecution(context.Background(), org, wf, out.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != cardflow.ExecSucceeded || ex.WorkflowOutputPayload["outcome"] != "approved" || len(ex.WorkflowOutputPayload["answers"].([]any)) != 2 {
		t.Errorf("execution: got %s %v, want SUCCEEDED, approved by two", ex.Status, ex.WorkflowOutputPayload)
	}
	if got := st.fake.Status(out.ExecutionID); got != sfnfake.StatusSucceeded {
		t.Errorf("state machine: got %s, want SUCCEEDED", got)
	}
	t.Logf("transitions %d, invocations %v", c.Transitions, c.Invocations)
}

// TestSequentialApprovalOnStepFunctions: on AWS the answer functions send
// no cards, so after the first approver's answer the parked task is
// nudged and Advance sends the card to the approver whose turn came; an
// Advance that fails after the deciding answer loses no answer.
func TestSequentialApprovalOnStepFunctions(t *testing.T) {
	store := boltStore(t, "cardflow.db")
	st := newStack(t, store, store)
	svc := st.harness.Service
	org, as, wf := publishApprovalWorkflow(t, svc, map[string]any{
		"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "sequential", "timeout": "PT1H",
	})
	admin := as("admin@example.com")
	out, err := svc.Trigger(admin, app.TriggerInput{WorkflowID: wf, ProcessID: "PO-2", Body: []byte(`{"amount": 500}`)})
	if err != nil {
		t.Fatal(err)
	}
	approvalID := cardflow.ApprovalIDOf(out.ExecutionID, 1)
	sent := func() []string {
		ds, _, err := store.ListDeliveries(context.Background(), org, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.Approver)
		}
		slices.Sort(got)
		return got
	}
	until(t, "the park task", func() bool {
		p, err := store.GetProcess(context.Background(), org, "PO-2")
		return err == nil && p.Wait != nil && p.Wait.Token != ""
	})
	if got, want := sent(), []string{"ann@example.com"}; !slices.Equal(got, want) {
		t.Fatalf("cards before an answer: got %q, want %q", got, want)
	}
	if _, err := svc.AnswerApproval(as("ann@example.com"), app.AnswerApprovalInput{ApprovalID: approvalID, Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	until(t, "the card of the next approver", func() bool { return slices.Equal(sent(), []string{"ann@example.com", "bob@example.com"}) })
	// The Advance that follows the deciding answer fails twice, as one
	// that cannot reach the store would; the retry finds both answers.
	st.failAdvance.Store(2)
	if _, err := svc.AnswerApproval(as("bob@example.com"), app.AnswerApprovalInput{ApprovalID: approvalID, Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	c := awaitMachine(t, st.fake, out.ExecutionID)
	ex, err := store.GetExecution(context.Background(), org, wf, out.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	answers, _ := ex.WorkflowOutputPayload["answers"].([]any)
	if ex.Status != cardflow.ExecSucceeded || ex.WorkflowOutputPayload["outcome"] != "approved" || len(answers) != 2 {
		t.Errorf("execution: got %s %v, want SUCCEEDED, approved by two", ex.Status, ex.WorkflowOutputPayload)
	}
	if got := st.failAdvance.Load(); got >= 0 {
		t.Errorf("failures left: got %d, want both spent (Advance invoked %d times)", got, c.Invocations[advanceARN])
	}
}

// publishApprovalWorkflow publishes, in an organization of its own, a
// card and a workflow whose approval step has config (the card filled in)
// and whose end outputs the step's output. It returns the organization,
// a context acting for a person of it, and the workflow id.
func publishApprovalWorkflow(t *testing.T, svc *app.Service, config map[string]any) (string, func(string) context.Context, string) {
	t.Helper()
	org := "org-" + cardflow.NewID(time.Now())
	as := func(person string) context.Context {
		return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
			OrganizationID: org, WorkspaceID: org + "-ws", Scopes: cardflow.AllScopes, Actor: person, Person: person,
		})
	}
	admin := as("admin@example.com")
	card, err := svc.SaveCard(admin, app.SaveCardInput{CardName: "approve", CardPayload: map[string]any{
		"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "Approve ${amount}?"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishCard(admin, card.CardID, card.CardVersion); err != nil {
		t.Fatal(err)
	}
	config["card_id"], config["data"] = card.CardID, map[string]any{"amount": "{{ input.amount }}"}
	wf, err := svc.SaveWorkflow(admin, app.SaveWorkflowInput{WorkflowName: "approval", WorkflowSteps: []cardflow.Step{
		{ID: "start", Name: "Requested", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "approve", Name: "Approval", Type: cardflow.StepApproval, Config: config},
		{ID: "done", Name: "Approved", Type: "end", Config: map[string]any{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}},
	}, WorkflowConnections: []cardflow.Connection{{From: "start", To: "approve"}, {From: "approve", To: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(admin, wf.WorkflowID, wf.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	return org, as, wf.WorkflowID
}
