package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRedriveExecution: an HTTP step whose service is down fails the
// execution; once the service is back, a redrive continues it from that
// step with the same id, and the event log names who asked. Requests the
// redrive refuses leave the execution as it is.
func TestRedriveExecution(t *testing.T) {
	t.Setenv("CARDFLOW_OUTBOUND_ALLOW", "127.0.0.1")
	var up atomic.Bool
	var calls atomic.Int32
	stock := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if !up.Load() {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"in_stock": 3}`))
	}))
	defer stock.Close()

	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	actOnly := e.key("org-a", "execute")
	r := e.do("POST", "/v1/workflows/saveWorkflow", admin, map[string]any{
		"workflow_name": "Stock check",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Order", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "qty", "name": "Quantity", "type": "transform", "config": map[string]any{"output": "{{ input.qty * 2 }}"}},
			map[string]any{"id": "check", "name": "Check stock", "type": "http", "config": map[string]any{"method": "GET", "url": stock.URL + "/items/4711"}},
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{"output": "{{ steps.check.output.body.in_stock + steps.qty.output }}"}},
		},
		"workflow_connections": []any{
			map[string]any{"from": "start", "to": "qty"}, map[string]any{"from": "qty", "to": "check"}, map[string]any{"from": "check", "to": "done"},
		},
	})
	if r.status != 200 {
		t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1}); r.status != 200 {
		t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
	}
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=SO-1", map[string]any{"qty": 2}).body["service_execution_id"])
	failed := e.awaitStatus(run, wf, id, "FAILED")
	if failed["workflow_current_state"] != "Check stock" {
		t.Fatalf("failed in %v, want Check stock", failed["workflow_current_state"])
	}

	body := map[string]any{"workflow_id": wf, "workflow_execution_id": id}
	for _, tc := range []struct {
		name   string
		body   any
		status int
	}{
		{"no execution id", map[string]any{"workflow_id": wf}, 400},
		{"an unknown field", map[string]any{"workflow_id": wf, "workflow_execution_id": id, "reason": "x"}, 400},
		{"an unknown execution", map[string]any{"workflow_id": wf, "workflow_execution_id": "nope"}, 404},
	} {
		if r := e.do("POST", "/v1/workflows/redriveExecution", run, tc.body); r.status != tc.status {
			t.Errorf("%s: got %d %s, want %d", tc.name, r.status, r.raw, tc.status)
		}
	}
	if again := e.awaitStatus(run, wf, id, "FAILED"); again["modified_on"] != failed["modified_on"] {
		t.Errorf("refused redrives changed the execution: modified_on %v, was %v", again["modified_on"], failed["modified_on"])
	}

	up.Store(true)
	before := calls.Load()
	r = e.do("POST", "/v1/workflows/redriveExecution", actOnly, body)
	item, _ := r.body["item"].(map[string]any)
	if r.status != 200 || item["status"] != "RUNNING" || item["workflow_current_state"] != "Check stock" || item["workflow_execution_id"] != id {
		t.Fatalf("redrive: got %d %s, want 200 RUNNING in Check stock", r.status, r.raw)
	}
	if strings.Contains(string(r.raw), "workflow_event_log") {
		t.Errorf("a key without read got %s, want the outline only", r.raw)
	}
	done := e.awaitStatus(run, wf, id, "SUCCEEDED")
	if got := done["workflow_output_payload"].(map[string]any)["value"]; got != float64(7) {
		t.Errorf("output: got %v, want 7 (3 in stock and the quantity 4 from before the redrive)", got)
	}
	if got := calls.Load() - before; got != 1 {
		t.Errorf("the redrive called the service %d times, want once", got)
	}
	var redriven map[string]any
	for _, ev := range done["workflow_event_log"].(map[string]any)["events"].([]any) {
		if ev := ev.(map[string]any); ev["type"] == "ExecutionRedriven" {
			redriven = ev
		}
	}
	if redriven == nil || redriven["actor"] == nil || redriven["actor"] == "" || redriven["step_id"] != "check" {
		t.Errorf("event log: got ExecutionRedriven %v, want one from check naming who asked", redriven)
	}
	if r := e.do("POST", "/v1/workflows/redriveExecution", run, body); r.status != 409 || !strings.Contains(r.msg(), "SUCCEEDED") {
		t.Errorf("redrive a SUCCEEDED execution: got %d %s, want 409 saying why", r.status, r.raw)
	}
}
