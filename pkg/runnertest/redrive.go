package runnertest

import (
	"context"
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
