package runnertest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// The service's use cases take JSON as deep as the decoder reads (10,000
// levels); the HTTP API refuses more than cardflow.MaxNesting. These tests
// go around it, as bodies did before the limit: stored a few levels deeper
// still, the record cannot be read back.

// nestedArrays returns n arrays, one in the other.
func nestedArrays(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

// awaitEnd polls the execution until it has finished, reading past the
// moments its record cannot be read.
func awaitEnd(t *testing.T, h Harness, org, workflowID, id string) *cardflow.Execution {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ex, err := h.Store.GetExecution(t.Context(), org, workflowID, id)
		switch {
		case err == nil && !ex.Open():
			return ex
		case err != nil && !errors.Is(err, cardflow.ErrUnreadable):
			t.Fatalf("get execution: %v", err)
		case time.Now().After(deadline):
			t.Fatalf("execution %s: got %v, %v, want it ended", id, ex, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wantFailed checks that the execution ended FAILED, saying why.
func wantFailed(t *testing.T, ex *cardflow.Execution, reason string) {
	t.Helper()
	if ex.Status != cardflow.ExecFailed || !strings.Contains(outputJSON(ex), reason) {
		t.Errorf("execution: got %s %s, want FAILED saying %q", ex.Status, outputJSON(ex), reason)
	}
}

// testUnreadableInput: an execution whose stored record cannot be read
// ends FAILED, once, with its record readable again; before, the runner
// retried it for ever.
func testUnreadableInput(t *testing.T, h Harness) {
	org := "org-" + cardflow.NewID(time.Now())
	ctx := ctxOf(org)
	wf := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
	}, []cardflow.Connection{{From: "start", To: "done"}})
	out, err := h.Service.Trigger(ctx, app.TriggerInput{WorkflowID: wf, ProcessID: "deep-input", Body: []byte(nestedArrays(10_000))})
	if err != nil {
		t.Fatalf("trigger: %v", err)
	}
	ex := awaitEnd(t, h, org, wf, out.ExecutionID)
	wantFailed(t, ex, "its stored record cannot be read in full")
	// Its process id is free again.
	trigger(t, h, ctx, wf, "deep-input", obj{})
}

// testUnreadableResume: a resume so deep that the process record holding
// it cannot be read ends its execution FAILED; further resumes and
// triggers with the process id are a conflict that says why.
func testUnreadableResume(t *testing.T, h Harness) {
	org := "org-" + cardflow.NewID(time.Now())
	ctx := ctxOf(org)
	wf := approval(t, h, ctx)
	id := trigger(t, h, ctx, wf, "deep-resume", obj{"amount": 1})
	await(t, h, ctx, wf, id, cardflow.ExecWaiting)
	if _, err := h.Service.Resume(ctx, "deep-resume", []byte(`{"items": `+nestedArrays(9_999)+`}`)); err != nil {
		t.Fatalf("resume: %v", err)
	}
	ex := awaitEnd(t, h, org, wf, id)
	wantFailed(t, ex, "a record it needs cannot be read")
	_, err := h.Service.Resume(ctx, "deep-resume", []byte(`{"decision": "approve"}`))
	if cardflow.ErrorCode(err) != cardflow.ECONFLICT || !strings.Contains(cardflow.ErrorMessage(err), "cannot be read") {
		t.Errorf("resume again: got %v, want CONFLICT saying the record cannot be read", err)
	}
	_, err = h.Service.Trigger(ctx, app.TriggerInput{WorkflowID: wf, ProcessID: "deep-resume"})
	if cardflow.ErrorCode(err) != cardflow.ECONFLICT || !strings.Contains(cardflow.ErrorMessage(err), "process id deep-resume") {
		t.Errorf("trigger with the process id: got %v, want CONFLICT saying its record cannot be read", err)
	}
}
