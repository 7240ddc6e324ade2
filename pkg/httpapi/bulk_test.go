package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
)

// awaitBulk polls a bulk operation until it is no longer RUNNING.
func (e *env) awaitBulk(key, id string) map[string]any {
	e.t.Helper()
	var op map[string]any
	testenv.WaitFor(e.t, "bulk operation "+id+" to end", func() bool {
		r := e.get("/v1/workflows/getBulkOperation", key, "bulk_operation_id", id)
		if r.status != 200 {
			e.t.Fatalf("getBulkOperation: got %d %s", r.status, r.raw)
		}
		op = r.body["item"].(map[string]any)
		return op["status"] != "RUNNING"
	})
	return op
}

// TestBulkCancelThroughTheAPI cancels the waiting executions of one
// workflow in bulk: each is cancelled once, by the operation, and the
// finished one, the other workflow's and the other organization's stay.
func TestBulkCancelThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	wf, _ := e.publishedApproval(admin)
	other, _ := e.publishedApproval(admin)
	adminB := e.key("org-b", "read", "admin", "execute")
	wfB, _ := e.publishedApproval(adminB)
	trigger := func(key, workflowID string, i int) string {
		r := e.trigger(key, fmt.Sprintf("/v1/workflows/triggerworkflow/%s/1?process_id=PO-%d", workflowID, i), map[string]any{"amount": 5000})
		if r.status != 200 {
			t.Fatalf("trigger: got %d %s", r.status, r.raw)
		}
		id := str(r.body["service_execution_id"])
		e.awaitStatus(key, workflowID, id, "WAITING")
		return id
	}
	var waiting []string
	for i := range 35 {
		waiting = append(waiting, trigger(admin, wf, i))
	}
	finished := trigger(admin, wf, 100)
	if r := e.do("POST", "/v1/workflows/cancelExecution", admin, map[string]any{"workflow_id": wf, "workflow_execution_id": finished}); r.status != 200 {
		t.Fatalf("cancel: got %d %s", r.status, r.raw)
	}
	untouched := trigger(admin, other, 200)
	theirs := trigger(adminB, wfB, 300)

	body := map[string]any{"action": "cancel", "workflow_id": wf, "status": "WAITING", "client_token": "cleanup-1"}
	r := e.do("POST", "/v1/workflows/startBulkOperation", admin, body)
	if r.status != 200 {
		t.Fatalf("startBulkOperation: got %d %s", r.status, r.raw)
	}
	id := str(r.body["item"].(map[string]any)["bulk_operation_id"])
	op := e.awaitBulk(admin, id)
	if op["status"] != "SUCCEEDED" || op["done"] != float64(len(waiting)) || op["failed"] != float64(0) || op["skipped"] != float64(0) {
		t.Errorf("the operation: got %v, want SUCCEEDED with %d done", op, len(waiting))
	}
	for _, ex := range waiting {
		item := e.get("/v1/workflows/getWorkflowExecutionById", admin, "workflow_id", wf, "workflow_execution_id", ex).body["item"].(map[string]any)
		events := 0
		for _, ev := range item["workflow_event_log"].(map[string]any)["events"].([]any) {
			if ev.(map[string]any)["type"] == "ExecutionCancelled" {
				events++
			}
		}
		if item["status"] != "CANCELLED" || item["modified_by"] != app.BulkActor(id) || events != 1 {
			t.Errorf("execution %s: got %v by %v with %d cancel events, want CANCELLED once by the operation", ex, item["status"], item["modified_by"], events)
		}
	}
	e.awaitStatus(admin, other, untouched, "WAITING")
	e.awaitStatus(adminB, wfB, theirs, "WAITING")

	// Starting again with the token answers the same operation; the
	// other organization cannot read it.
	if r := e.do("POST", "/v1/workflows/startBulkOperation", admin, body); str(r.body["item"].(map[string]any)["bulk_operation_id"]) != id {
		t.Errorf("the same start again: got %s, want operation %s", r.raw, id)
	}
	if r := e.get("/v1/workflows/getBulkOperation", adminB, "bulk_operation_id", id); r.status != 404 {
		t.Errorf("org-b reading org-a's operation: got %d %s, want 404", r.status, r.raw)
	}
}

func TestStartBulkOperationRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.key("org-a", "read", "execute")
	for _, tc := range []struct {
		body any
		want string
	}{
		{map[string]any{"action": "cancel"}, "at least one filter"},
		{map[string]any{"action": "cancel", "status": ""}, "status must not be empty"},
		{map[string]any{"action": "archive", "status": "FAILED"}, "action must be"},
		{map[string]any{"action": "cancel", "status": "BROKEN"}, "status must be"},
		{map[string]any{"action": "cancel", "workflow_id": "x"}, "workflow_id must be an id"},
		{map[string]any{"action": "cancel", "created_before": 0}, "created_before must be"},
		{map[string]any{"action": "cancel", "status": "FAILED", "limit": 3}, "unknown field"},
	} {
		r := e.do("POST", "/v1/workflows/startBulkOperation", key, tc.body)
		if r.status != 400 || !strings.Contains(r.msg(), tc.want) {
			t.Errorf("%v: got %d %s, want 400 saying %q", tc.body, r.status, r.raw, tc.want)
		}
	}
	for _, q := range [][]string{{}, {"bulk_operation_id", "x"}} {
		if r := e.get("/v1/workflows/getBulkOperation", key, q...); r.status != 400 {
			t.Errorf("getBulkOperation %v: got %d %s, want 400", q, r.status, r.raw)
		}
	}
}

// TestBulkRedriveThroughTheAPI: executions that failed at an HTTP step
// while its service was down are redriven in bulk once it is back, each
// once, and succeed; a redrive the operation made is not made again when
// the same start is repeated.
func TestBulkRedriveThroughTheAPI(t *testing.T) {
	t.Setenv("CARDFLOW_OUTBOUND_ALLOW", "127.0.0.1")
	var up atomic.Bool
	stock := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"in_stock": 3}`))
	}))
	defer stock.Close()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	r := e.do("POST", "/v1/workflows/saveWorkflow", admin, map[string]any{
		"workflow_name": "Stock check",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Order", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "check", "name": "Check stock", "type": "http", "config": map[string]any{"method": "GET", "url": stock.URL + "/items/4711"}},
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{}},
		},
		"workflow_connections": []any{map[string]any{"from": "start", "to": "check"}, map[string]any{"from": "check", "to": "done"}},
	})
	if r.status != 200 {
		t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1})
	var failed []string
	for i := range 12 {
		id := str(e.trigger(admin, fmt.Sprintf("/v1/workflows/triggerworkflow/%s?process_id=SO-%d", wf, i), map[string]any{}).body["service_execution_id"])
		e.awaitStatus(admin, wf, id, "FAILED")
		failed = append(failed, id)
	}
	up.Store(true)
	body := map[string]any{"action": "redrive", "workflow_id": wf, "status": "FAILED", "client_token": "retry-stock"}
	r = e.do("POST", "/v1/workflows/startBulkOperation", admin, body)
	if r.status != 200 {
		t.Fatalf("startBulkOperation: got %d %s", r.status, r.raw)
	}
	id := str(r.body["item"].(map[string]any)["bulk_operation_id"])
	if op := e.awaitBulk(admin, id); op["status"] != "SUCCEEDED" || op["done"] != float64(len(failed)) || op["failed"] != float64(0) {
		t.Errorf("the operation: got %v, want SUCCEEDED with %d done", op, len(failed))
	}
	for _, ex := range failed {
		item := e.awaitStatus(admin, wf, ex, "SUCCEEDED")
		redrives := 0
		for _, ev := range item["workflow_event_log"].(map[string]any)["events"].([]any) {
			if ev := ev.(map[string]any); ev["type"] == "ExecutionRedriven" && ev["actor"] == app.BulkActor(id) {
				redrives++
			}
		}
		if redrives != 1 {
			t.Errorf("execution %s: got %d redrives by the operation, want 1", ex, redrives)
		}
	}
}
