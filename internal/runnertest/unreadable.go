package runnertest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Records nested deeper than JSON decoders read (10,000 levels) are what
// bodies taken before nesting was limited left behind. The HTTP API now
// refuses more than cardflow.MaxNesting levels; the service's use cases,
// which these tests call, do not check, but the bbolt store cannot encode
// an execution whose input nests that deep, so a trigger leaves such a
// record on one store only. The tests plant them where every store still
// writes them: a step output in the execution's state, a resume in the
// process record.

// nested returns n arrays, one in the other.
func nested(n int) any {
	var v any = "bottom"
	for range n {
		v = []any{v}
	}
	return v
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

// wantFailed checks that the execution ended FAILED, its output saying
// why.
func wantFailed(t *testing.T, ex *cardflow.Execution, reason string) {
	t.Helper()
	out, _ := json.Marshal(ex.WorkflowOutputPayload)
	if ex.Status != cardflow.ExecFailed || !strings.Contains(string(out), reason) {
		t.Errorf("execution: got %s %s, want FAILED saying %q", ex.Status, out, reason)
	}
}

// testUnreadableExecution: an execution whose stored record cannot be read
// ends FAILED, once, with its record readable again; before, the runner
// retried it for ever. While it sleeps, a step output 10,000 levels deep
// is planted in its record, as outputs were stored before their nesting
// was limited; it is read when the delay ends.
func testUnreadableExecution(t *testing.T, h Harness) {
	org := "org-" + cardflow.NewID(time.Now())
	ctx := ctxOf(org)
	wf := publish(t, h, ctx, []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("pause", "delay", obj{"duration": "PT2S"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
	}, []cardflow.Connection{{From: "start", To: "pause"}, {From: "pause", To: "done"}})
	id := trigger(t, h, ctx, wf, "deep-output", obj{"amount": 1})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		ex, err := h.Store.GetExecution(ctx, org, wf, id)
		if err != nil {
			t.Fatalf("get execution: %v", err)
		}
		if ex.State.Phase == cardflow.PhaseSleeping {
			ex.State.Outputs["start"] = nested(10_000)
			if err := h.Store.PutExecution(ctx, ex); err != nil {
				t.Fatalf("plant a step output nested too deep: %v", err)
			}
			break
		}
		if !ex.Open() || time.Now().After(deadline) {
			t.Fatalf("execution %s: got %s in phase %q, want it asleep", id, ex.Status, ex.State.Phase)
		}
	}
	if _, err := h.Store.GetExecution(ctx, org, wf, id); !errors.Is(err, cardflow.ErrUnreadable) {
		t.Fatalf("planted record: got %v, want it unreadable", err)
	}
	ex := awaitEnd(t, h, org, wf, id)
	wantFailed(t, ex, "its stored record cannot be read in full")
	// Its process id is free again.
	trigger(t, h, ctx, wf, "deep-output", obj{})
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
	body, err := json.Marshal(obj{"items": nested(9_999)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.Resume(ctx, "deep-resume", body); err != nil {
		t.Fatalf("resume: %v", err)
	}
	ex := awaitEnd(t, h, org, wf, id)
	wantFailed(t, ex, "a record it needs cannot be read")
	_, err = h.Service.Resume(ctx, "deep-resume", []byte(`{"decision": "approve"}`))
	if cardflow.ErrorCode(err) != cardflow.ECONFLICT || !strings.Contains(cardflow.ErrorMessage(err), "cannot be read") {
		t.Errorf("resume again: got %v, want CONFLICT saying the record cannot be read", err)
	}
	_, err = h.Service.Trigger(ctx, app.TriggerInput{WorkflowID: wf, ProcessID: "deep-resume"})
	if cardflow.ErrorCode(err) != cardflow.ECONFLICT || !strings.Contains(cardflow.ErrorMessage(err), "process id deep-resume") {
		t.Errorf("trigger with the process id: got %v, want CONFLICT saying its record cannot be read", err)
	}
}
