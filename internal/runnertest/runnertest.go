// Package runnertest is the contract suite of cardflow.Runner. It drives
// executions through the service's use cases (trigger, resume, cancel) and
// watches the store, so it holds for any runner that calls the engine's
// Advance as the port says.
package runnertest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Harness is a service whose executions run on the runner under test.
type Harness struct {
	Service *app.Service
	Store   cardflow.Store
}

type obj = map[string]any

// Run runs the suite; newHarness builds a fresh service for each subtest.
// The runner's own test opens the stores it runs on and builds the service
// over them, so this suite depends on no adapter.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Harness)
	}{
		{"SynchronousChain", testChain},
		{"CardWaitResumed", testResume},
		{"ResumeBeforeWait", testEarlyResume},
		{"Delay", testDelay},
		{"Cancel", testCancel},
		{"ManyAtOnce", testMany},
		{"ConcurrentResumes", testConcurrentResumes},
		{"ConcurrentIdempotentTriggers", testConcurrentIdempotentTriggers},
		{"UnreadableExecution", testUnreadableExecution},
		{"UnreadableResume", testUnreadableResume},
		{"Redrive", testRedrive},
		{"ApprovalOverride", testApprovalOverride},
		{"RedriveCountsAgainstTheCap", testRedriveCap},
		{"ApprovalOfWhoTriggered", testApprovalOfWhoTriggered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newHarness(t))
		})
	}
}

func ctxOf(org string) context.Context {
	return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: org, WorkspaceID: org + "-ws", Scopes: cardflow.AllScopes, Actor: "runnertest",
	})
}

func step(id, typ string, cfg obj) cardflow.Step {
	return cardflow.Step{ID: id, Name: "Step " + id, Type: typ, Config: cfg}
}

// publish saves and publishes a workflow and returns its id.
func publish(t *testing.T, h Harness, ctx context.Context, steps []cardflow.Step, conns []cardflow.Connection) string {
	t.Helper()
	w, err := h.Service.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "runner test", WorkflowSteps: steps, WorkflowConnections: conns})
	if err != nil {
		t.Fatalf("save workflow: %v", err)
	}
	if _, err := h.Service.PublishWorkflow(ctx, w.WorkflowID, w.WorkflowVersion); err != nil {
		t.Fatalf("publish workflow: %v", err)
	}
	return w.WorkflowID
}

func trigger(t *testing.T, h Harness, ctx context.Context, workflowID, processID string, input any) string {
	t.Helper()
	body, _ := json.Marshal(input)
	out, err := h.Service.Trigger(ctx, app.TriggerInput{WorkflowID: workflowID, ProcessID: processID, Body: body})
	if err != nil {
		t.Fatalf("trigger: %v", err)
	}
	return out.ExecutionID
}

// await polls the execution until it has one of the statuses.
func await(t *testing.T, h Harness, ctx context.Context, workflowID, id string, statuses ...string) *cardflow.Execution {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ex, err := h.Service.GetExecution(ctx, workflowID, id)
		if err != nil {
			t.Fatalf("get execution: %v", err)
		}
		for _, s := range statuses {
			if ex.Status == s {
				return ex
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s is %s in %q, want %v", id, ex.Status, ex.WorkflowCurrentState, statuses)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// outputJSON returns the end step's output: the workflows here end with a
// value, which the execution's output payload keeps under "value".
func outputJSON(ex *cardflow.Execution) string {
	b, _ := json.Marshal(ex.WorkflowOutputPayload[cardflow.PayloadValueKey])
	return string(b)
}

func testChain(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	wf := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("double", "transform", obj{"output": "{{ input.n * 2.0 }}"}),
		step("big", "condition", obj{}),
		step("yes", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.double.output }}"}),
		step("no", "end", obj{"status": "FAILED"}),
	}, []cardflow.Connection{
		{From: "start", To: "double"}, {From: "double", To: "big"},
		{From: "big", To: "yes", When: "steps.double.output > 10.0"}, {From: "big", To: "no"},
	})
	id := trigger(t, h, ctx, wf, "", obj{"n": 21})
	ex := await(t, h, ctx, wf, id, cardflow.ExecSucceeded, cardflow.ExecFailed)
	if got, want := ex.Status+" "+outputJSON(ex), "SUCCEEDED 42"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// approval publishes a card and a workflow that waits on it.
func approval(t *testing.T, h Harness, ctx context.Context) string {
	t.Helper()
	c, err := h.Service.SaveCard(ctx, app.SaveCardInput{CardName: "approve", CardPayload: obj{
		"type": "AdaptiveCard", "version": "1.5", "body": []any{obj{"type": "TextBlock", "text": "Approve ${amount}?"}},
	}})
	if err != nil {
		t.Fatalf("save card: %v", err)
	}
	if _, err := h.Service.PublishCard(ctx, c.CardID, c.CardVersion); err != nil {
		t.Fatalf("publish card: %v", err)
	}
	return publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("ask", "card", obj{"card_id": c.CardID, "data": obj{"amount": "{{ input.amount }}"}, "timeout": "P1D"}),
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.ask.output.decision }}"}),
	}, []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}})
}

func testResume(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	wf := approval(t, h, ctx)
	id := trigger(t, h, ctx, wf, "PO-1", obj{"amount": 5000})
	await(t, h, ctx, wf, id, cardflow.ExecWaiting)
	// The wait opens just after the record says WAITING; a resume in
	// between is kept and delivered when it opens, so either way it lands.
	if _, err := h.Service.Resume(ctx, "PO-1", []byte(`{"source": "TEAMS", "decision": "approve"}`)); err != nil {
		t.Fatalf("resume: %v", err)
	}
	ex := await(t, h, ctx, wf, id, cardflow.ExecSucceeded, cardflow.ExecFailed)
	if got, want := ex.Status+" "+outputJSON(ex), `SUCCEEDED "approve"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := h.Service.Resume(ctx, "PO-1", []byte(`{"decision": "reject"}`)); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		t.Errorf("second resume: got %v, want CONFLICT", err)
	}
}

func testEarlyResume(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	wf := approval(t, h, ctx)
	// A delay puts time between the trigger and the wait.
	w, err := h.Service.GetWorkflow(ctx, wf, 1)
	if err != nil {
		t.Fatal(err)
	}
	steps := append([]cardflow.Step{w.WorkflowSteps[0], step("pause", "delay", obj{"duration": "PT1S"})}, w.WorkflowSteps[1:]...)
	wf = publish(t, h, ctx, steps, []cardflow.Connection{{From: "start", To: "pause"}, {From: "pause", To: "ask"}, {From: "ask", To: "done"}})
	id := trigger(t, h, ctx, wf, "early-1", obj{"amount": 1})
	out, err := h.Service.Resume(ctx, "early-1", []byte(`{"decision": "approve"}`))
	if err != nil || out.Resumed {
		t.Fatalf("resume before the wait: got %+v, %v, want it kept", out, err)
	}
	ex := await(t, h, ctx, wf, id, cardflow.ExecSucceeded, cardflow.ExecFailed)
	if got, want := ex.Status+" "+outputJSON(ex), `SUCCEEDED "approve"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func testDelay(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	wf := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("pause", "delay", obj{"duration": "PT1S"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
	}, []cardflow.Connection{{From: "start", To: "pause"}, {From: "pause", To: "done"}})
	begin := time.Now()
	id := trigger(t, h, ctx, wf, "", obj{})
	ex := await(t, h, ctx, wf, id, cardflow.ExecSucceeded, cardflow.ExecFailed)
	if ex.Status != cardflow.ExecSucceeded {
		t.Errorf("got %s, want SUCCEEDED", ex.Status)
	}
	if slept := time.Since(begin); slept < time.Second {
		t.Errorf("finished after %v, before the delay of 1s ended", slept)
	}
}

func testCancel(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	wf := approval(t, h, ctx)
	id := trigger(t, h, ctx, wf, "cancel-1", obj{"amount": 1})
	await(t, h, ctx, wf, id, cardflow.ExecWaiting)
	ex, err := h.Service.Cancel(ctx, app.CancelInput{WorkflowID: wf, WorkflowExecutionID: id, Reason: "order withdrawn"})
	if err != nil || ex.Status != cardflow.ExecCancelled {
		t.Fatalf("cancel: got %v, %v, want CANCELLED", ex, err)
	}
	if _, err := h.Service.Resume(ctx, "cancel-1", nil); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		t.Errorf("resume after cancel: got %v, want CONFLICT", err)
	}
	if _, err := h.Service.Cancel(ctx, app.CancelInput{WorkflowID: wf, WorkflowExecutionID: id}); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		t.Errorf("second cancel: got %v, want CONFLICT", err)
	}
	time.Sleep(50 * time.Millisecond)
	if got := await(t, h, ctx, wf, id, cardflow.ExecCancelled, cardflow.ExecSucceeded, cardflow.ExecFailed); got.Status != cardflow.ExecCancelled {
		t.Errorf("after cancel the execution became %s", got.Status)
	}
	// The process id is free again.
	trigger(t, h, ctx, wf, "cancel-1", obj{"amount": 2})
}

func testMany(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	wf := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("a", "transform", obj{"output": "{{ input.i + 1.0 }}"}),
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.a.output }}"}),
	}, []cardflow.Connection{{From: "start", To: "a"}, {From: "a", To: "done"}})
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = trigger(t, h, ctx, wf, "", obj{"i": i})
	}
	for i, id := range ids {
		ex := await(t, h, ctx, wf, id, cardflow.ExecSucceeded, cardflow.ExecFailed)
		if got, want := outputJSON(ex), itoa(i+1); got != want {
			t.Errorf("execution %d: got output %s, want %s", i, got, want)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
