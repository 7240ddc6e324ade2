package runnertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// testRedrive: an execution whose card timed out with no timeout exit ends
// TIMED_OUT; a redrive continues it from that card with the same id, the
// step before it not run again and its output kept, and a resume then
// finishes it. Executions that are not FAILED or TIMED_OUT, and those of
// another organization, cannot be redriven and stay as they are.
func testRedrive(t *testing.T, h Harness) {
	org := "org-" + cardflow.NewID(time.Now())
	ctx := ctxOf(org)
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
		step("prep", "transform", obj{"output": "{{ input.amount * 2.0 }}"}),
		step("ask", "card", obj{"card_id": c.CardID, "data": obj{"amount": "{{ steps.prep.output }}"}, "timeout": "PT1S"}),
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.ask.output.decision + ' ' + string(steps.prep.output) }}"}),
	}, []cardflow.Connection{{From: "start", To: "prep"}, {From: "prep", To: "ask"}, {From: "ask", To: "done"}})
	id := trigger(t, h, ctx, wf, "redrive-1", obj{"amount": 21})
	redrive := func(ctx context.Context, id string) (*app.Redriven, error) {
		return h.Service.RedriveExecution(ctx, app.RedriveInput{WorkflowID: wf, WorkflowExecutionID: id})
	}

	waiting := await(t, h, ctx, wf, id, cardflow.ExecWaiting)
	if _, err := redrive(ctx, id); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		t.Errorf("redrive a WAITING execution: got %v, want CONFLICT", err)
	}
	timedOut := await(t, h, ctx, wf, id, cardflow.ExecTimedOut, cardflow.ExecSucceeded, cardflow.ExecFailed)
	if timedOut.Status != cardflow.ExecTimedOut {
		t.Fatalf("got %s, want TIMED_OUT", timedOut.Status)
	}
	if _, err := redrive(ctxOf("other-"+org), id); cardflow.ErrorCode(err) != cardflow.ENOTFOUND {
		t.Errorf("redrive another organization's execution: got %v, want NOT_FOUND", err)
	}
	if _, err := redrive(ctx, "01JUNKNOWNEXECUTION0000000"); cardflow.ErrorCode(err) != cardflow.ENOTFOUND {
		t.Errorf("redrive an unknown execution: got %v, want NOT_FOUND", err)
	}
	if got, _ := h.Service.GetExecution(ctx, wf, id); got.Status != cardflow.ExecTimedOut {
		t.Fatalf("refused redrives changed the execution to %s", got.Status)
	}

	out, err := redrive(ctx, id)
	if err != nil {
		t.Fatalf("redrive: %v", err)
	}
	if got, want := out.Status+" "+out.WorkflowCurrentState+" "+out.WorkflowExecutionID, "RUNNING Step ask "+id; got != want {
		t.Errorf("redrive answered %s, want %s", got, want)
	}
	await(t, h, ctx, wf, id, cardflow.ExecWaiting)
	if _, err := h.Service.Resume(ctx, "redrive-1", []byte(`{"decision": "approve"}`)); err != nil {
		t.Fatalf("resume the redriven execution: %v", err)
	}
	ex := await(t, h, ctx, wf, id, cardflow.ExecSucceeded, cardflow.ExecFailed, cardflow.ExecTimedOut)
	if got, want := ex.Status+" "+outputJSON(ex), `SUCCEEDED "approve 42"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := ex.TriggeredBy, waiting.TriggeredBy; got != want || got == "" {
		t.Errorf("triggered_by after the redrive: got %q, want %q as before", got, want)
	}
	// The history goes on: started once, the step before the card run
	// once, the timeout and the redrive with who asked.
	count := map[string]int{}
	var redriven cardflow.Event
	for _, ev := range ex.WorkflowEventLog.Events {
		count[ev.Type+" "+ev.StepID]++
		if ev.Type == cardflow.EventRedriven {
			redriven = ev
		}
	}
	for key, want := range map[string]int{
		"ExecutionStarted ": 1, "StepStarted prep": 1, "StepStarted ask": 2, "TimedOut ask": 2, // the step's and the execution's
		"ExecutionRedriven ask": 1, "ExecutionSucceeded done": 1,
	} {
		if got := count[key]; got != want {
			t.Errorf("events %q: got %d, want %d", key, got, want)
		}
	}
	if redriven.Actor != "runnertest" {
		t.Errorf("ExecutionRedriven actor: got %q, want runnertest", redriven.Actor)
	}
	if ex.CreatedOn != waiting.CreatedOn {
		t.Errorf("created_on: got %d, want %d as before the redrive", ex.CreatedOn, waiting.CreatedOn)
	}
	if _, err := redrive(ctx, id); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		t.Errorf("redrive a SUCCEEDED execution: got %v, want CONFLICT", err)
	}
}

// testRedriveCap: a redrive opens an execution again, so it counts against
// the organization's cap on open executions as a trigger does. At the cap
// a redrive is refused THROTTLED with a wait, a bulk redrive counts each
// execution failed with the reason, and the executions stay FAILED with
// their process ids free; once a place is free the redrive goes through.
func testRedriveCap(t *testing.T, h Harness) {
	org := "org-" + cardflow.NewID(time.Now())
	ctx := ctxOf(org)
	if _, err := h.Service.SetLimits(context.Background(), cardflow.Limits{OrganizationID: org, MaxOpenExecutions: 2}); err != nil {
		t.Fatalf("set limits: %v", err)
	}
	failing := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("read", "transform", obj{"output": "{{ input.missing.field }}"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
	}, []cardflow.Connection{{From: "start", To: "read"}, {From: "read", To: "done"}})
	waiting := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("hold", "wait", obj{"timeout": "PT1H"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
	}, []cardflow.Connection{{From: "start", To: "hold"}, {From: "hold", To: "done"}})
	var failed []string
	for i := range 3 {
		id := trigger(t, h, ctx, failing, "cap-failed-"+itoa(i), obj{})
		if ex := await(t, h, ctx, failing, id, cardflow.ExecFailed, cardflow.ExecSucceeded); ex.Status != cardflow.ExecFailed {
			t.Fatalf("got %s, want FAILED", ex.Status)
		}
		failed = append(failed, id)
	}
	holder := trigger(t, h, ctx, waiting, "cap-wait-0", obj{})
	await(t, h, ctx, waiting, holder, cardflow.ExecWaiting)
	await(t, h, ctx, waiting, trigger(t, h, ctx, waiting, "cap-wait-1", obj{}), cardflow.ExecWaiting)

	redrive := func(id string) error {
		_, err := h.Service.RedriveExecution(ctx, app.RedriveInput{WorkflowID: failing, WorkflowExecutionID: id})
		return err
	}
	stillFailed := func(when string) {
		t.Helper()
		for i, id := range failed {
			if ex, err := h.Service.GetExecution(ctx, failing, id); err != nil || ex.Status != cardflow.ExecFailed {
				t.Errorf("%s: execution %d is %v (%v), want FAILED", when, i, ex.Status, err)
			}
			if p, err := h.Store.GetProcess(ctx, org, "cap-failed-"+itoa(i)); err != nil || !p.Closed {
				t.Errorf("%s: process record %d open (%v), want it closed, free for a trigger", when, i, err)
			}
		}
	}
	err := redrive(failed[0])
	if cardflow.ErrorCode(err) != cardflow.ETHROTTLED || cardflow.RetryAfterOf(err) <= 0 {
		t.Errorf("redrive at the cap: got %v, want THROTTLED with a Retry-After", err)
	}
	stillFailed("after the refused redrive")

	op, err := h.Service.StartBulkOperation(ctx, app.StartBulkInput{Action: cardflow.BulkRedrive, Status: cardflow.ExecFailed})
	if err != nil {
		t.Fatalf("start bulk redrive: %v", err)
	}
	for deadline := time.Now().Add(20 * time.Second); op.Status == cardflow.BulkRunning; {
		if err := h.Service.RunBulkOperations(context.Background(), time.Now().Add(time.Minute)); err != nil {
			t.Fatalf("run bulk operations: %v", err)
		}
		if op, err = h.Service.GetBulkOperation(ctx, op.BulkOperationID); err != nil {
			t.Fatalf("get bulk operation: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("bulk operation still %s", op.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, want := fmt.Sprintf("%s done %d failed %d skipped %d", op.Status, op.Done, op.Failed, op.Skipped), "SUCCEEDED done 0 failed 3 skipped 0"; got != want {
		t.Errorf("bulk redrive at the cap: got %s, want %s", got, want)
	}
	for _, f := range op.Failures {
		if !strings.Contains(f.Reason, "open executions, its limit") {
			t.Errorf("bulk redrive failure: got reason %q, want the cap named", f.Reason)
		}
	}
	stillFailed("after the bulk redrive")

	if _, err := h.Service.Cancel(ctx, app.CancelInput{WorkflowID: waiting, WorkflowExecutionID: holder}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if err := redrive(failed[0]); err != nil {
		t.Errorf("redrive with a place free: %v", err)
	}
}
