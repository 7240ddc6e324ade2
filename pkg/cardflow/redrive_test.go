package cardflow

import (
	"testing"
	"time"
)

func TestRedrivable(t *testing.T) {
	t.Parallel()
	steps := []Step{{ID: "start", Name: "Order"}, {ID: "check", Name: "Check stock"}, {ID: "no", Name: "Rejected", Type: "end"}}
	for _, tc := range []struct {
		name   string
		status string
		failed string
		output map[string]any
		want   string // the step, or the error code
	}{
		{"failed in a step", ExecFailed, "check", map[string]any{"error": "404", "step": "check"}, "check"},
		{"timed out in a step", ExecTimedOut, "check", nil, "check"},
		{"a record from before failed_step", ExecFailed, "", map[string]any{"error": "404", "step": "check"}, "check"},
		{"ended FAILED by its end step", ExecFailed, "", map[string]any{"step": "check"}, ECONFLICT},
		{"a step the workflow does not have", ExecFailed, "gone", nil, ECONFLICT},
		{"running", ExecRunning, "", nil, ECONFLICT},
		{"waiting", ExecWaiting, "", nil, ECONFLICT},
		{"succeeded", ExecSucceeded, "", nil, ECONFLICT},
		{"cancelled", ExecCancelled, "check", nil, ECONFLICT},
	} {
		ex := &Execution{WorkflowExecutionID: "ex-1", Status: tc.status, WorkflowOutputPayload: tc.output,
			WorkflowDetails: WorkflowDetails{WorkflowSteps: steps}, State: ExecutionState{FailedStep: tc.failed}}
		step, err := ex.Redrivable()
		got := ErrorCode(err)
		if step != nil {
			got = step.ID
		}
		if got != tc.want || (err != nil && ErrorMessage(err) == "") {
			t.Errorf("%s: got %q (%v), want %s", tc.name, got, err, tc.want)
		}
	}
}

func TestRedrive(t *testing.T) {
	t.Parallel()
	ex := &Execution{WorkflowExecutionID: "ex-1", Status: ExecTimedOut, ModifiedOn: 5,
		WorkflowOutputPayload: map[string]any{"error": "no answer", "step": "ask"},
		WorkflowEventLog:      EventLog{Events: []Event{{Type: EventStarted}, {Type: EventTimedOut}}, Total: 2},
		State:                 ExecutionState{FailedStep: "ask", ProcessID: "PO-1", Outputs: map[string]any{"prep": 42.0}}}
	if ex.Redriven() {
		t.Fatal("a TIMED_OUT execution reads as redriven")
	}
	ex.Redrive(&Step{ID: "ask", Name: "Manager approval"}, "ops@example.com", time.UnixMilli(1000))
	last := ex.WorkflowEventLog.Events[len(ex.WorkflowEventLog.Events)-1]
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"status", ex.Status, ExecRunning},
		{"current step", ex.WorkflowCurrentState, "Manager approval"},
		{"state step", ex.State.StepID, "ask"},
		{"failed step", ex.State.FailedStep, ""},
		{"run", ex.State.Run, 1},
		{"run ref", ex.RunRef().Run, 1},
		{"kept output", ex.State.Outputs["prep"], 42.0},
		{"output payload", len(ex.WorkflowOutputPayload), 0},
		{"modified by", *ex.ModifiedBy, "ops@example.com"},
		{"event", last.Type + " " + last.StepID + " " + last.Actor, "ExecutionRedriven ask ops@example.com"},
		{"events", ex.WorkflowEventLog.Total, 3},
		{"redriven", ex.Redriven(), true},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestReopenProcess(t *testing.T) {
	t.Parallel()
	ex := &Execution{WorkflowExecutionID: "ex-1", WorkflowID: "wf-1", WorkflowEventLog: EventLog{Total: 9}}
	for _, tc := range []struct {
		name      string
		p         Process
		wantErr   string
		wantWaits int
	}{
		{"its own, closed", Process{ExecutionID: "ex-1", Closed: true, ExpiresAt: 99, Waits: 2, Wait: &Wait{Seq: 2}}, "", 2},
		{"its own, open after a redrive that stopped", Process{ExecutionID: "ex-1", Waits: 2}, "", 2},
		{"another's, closed", Process{ExecutionID: "ex-2", WorkflowID: "wf-2", Closed: true, Waits: 1, Early: &Resume{}}, "", 9},
		{"another's, open", Process{ExecutionID: "ex-2", WorkflowID: "wf-2", Waits: 1}, ECONFLICT, 1},
	} {
		p := tc.p
		err := ReopenProcess(&p, ex)
		if got := ErrorCode(err); got != tc.wantErr {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.wantErr)
			continue
		}
		if p.Waits != tc.wantWaits {
			t.Errorf("%s: waits got %d, want %d", tc.name, p.Waits, tc.wantWaits)
		}
		if err == nil && (p.Closed || p.ExpiresAt != 0 || p.Wait != nil || p.Early != nil || p.ExecutionID != "ex-1" || p.WorkflowID != "wf-1") {
			t.Errorf("%s: got %+v, want it open, of ex-1, without wait or early resume", tc.name, p)
		}
	}
}
