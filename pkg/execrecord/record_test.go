package execrecord

import (
	"encoding/json"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestRecordPayloads checks that an execution's payloads are objects
// however it was stored: {} where nothing is set, and a value of a record
// from before payloads were objects wrapped as PayloadOf wraps it.
func TestRecordPayloads(t *testing.T) {
	running := &cardflow.Execution{WorkflowExecutionID: "ex-1", Status: cardflow.ExecRunning, WorkflowInputPayload: map[string]any{"amount": 2500.0}}
	record, err := Marshal(running)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(record, &got); err != nil {
		t.Fatal(err)
	}
	if in, out := string(got["workflow_input_payload"]), string(got["workflow_output_payload"]); in != `{"amount":2500}` || out != `{}` {
		t.Errorf("record of a running execution: got input %s and output %s, want {\"amount\":2500} and {}", in, out)
	}

	old := `{"workflow_execution_id": "ex-2", "status": "SUCCEEDED", "workflow_input_payload": [1], "workflow_output_payload": null,
		"state": {"step_id": "", "process_id": "po-2", "outputs": {}, "steps_run": 3}, "revision": 4}`
	ex, err := Unmarshal([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(ex.WorkflowInputPayload)
	out, _ := json.Marshal(ex.WorkflowOutputPayload)
	if string(in) != `{"value":[1]}` || string(out) != `{}` {
		t.Errorf("old record: got input %s and output %s, want {\"value\":[1]} and {}", in, out)
	}
	if ex.WorkflowExecutionID != "ex-2" || ex.State.ProcessID != "po-2" || ex.State.StepsRun != 3 || ex.Revision != 4 {
		t.Errorf("old record: got %s with state %+v and revision %d, want ex-2, process po-2, 3 steps, revision 4", ex.WorkflowExecutionID, ex.State, ex.Revision)
	}
}

func TestEventIDsStayTheSameAcrossWrites(t *testing.T) {
	e := &cardflow.Execution{WorkflowExecutionID: "x", Status: cardflow.ExecRunning, WorkflowEventLog: cardflow.EventLog{Events: []cardflow.Event{{Type: cardflow.EventStarted}}, Total: 1}}
	w, err := Split(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Events) != 1 || w.Events[0].ID != cardflow.EventID("x", 1) {
		t.Fatalf("got %+v, want one event with id %s", w.Events, cardflow.EventID("x", 1))
	}
	Wrote(e, w)
	e.Status = cardflow.ExecSucceeded
	e.WorkflowEventLog.Events = append(e.WorkflowEventLog.Events, cardflow.Event{Type: cardflow.EventSucceeded})
	e.WorkflowEventLog.Total++
	if w, err = Split(e); err != nil {
		t.Fatal(err)
	}
	if len(w.Events) != 1 || w.Events[0].ID != cardflow.EventID("x", 2) || w.Events[0].Type != cardflow.EventTypeSucceeded {
		t.Fatalf("got %+v, want only the succeeded event, with id %s", w.Events, cardflow.EventID("x", 2))
	}
	// A write that failed is split again: the same events, the same ids.
	again, err := Split(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Events) != 1 || again.Events[0].ID != w.Events[0].ID {
		t.Fatalf("got %+v, want the same event again", again.Events)
	}
}
