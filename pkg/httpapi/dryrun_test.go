package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestSaveDryRun: saveWorkflow and saveCard with dry_run check the body as
// a save would, answer that it is valid, and store nothing.
func TestSaveDryRun(t *testing.T) {
	e := newEnv(t)
	admin := e.key("acme", "admin", "read")
	card := map[string]any{"card_name": "Approve", "card_payload": map[string]any{"type": "AdaptiveCard", "version": "1.5"}}
	workflow := func(extra map[string]any) map[string]any {
		w := map[string]any{
			"workflow_name": "Dry",
			"workflow_steps": []any{
				map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
				map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{"status": "SUCCEEDED"}},
			},
			"workflow_connections": []any{map[string]any{"from": "start", "to": "done"}},
		}
		for k, v := range extra {
			w[k] = v
		}
		return w
	}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{k: v}
		for k, v := range m {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
		return out
	}
	for _, tt := range []struct {
		name, path string
		body       map[string]any
		status     int
		wantMsg    string
	}{
		{"valid card", "/v1/adaptive-cards/saveCard", with(card, "dry_run", true), http.StatusOK, "success"},
		{"card of no such id", "/v1/adaptive-cards/saveCard", with(with(card, "card_id", "01AAAAAAAAAAAAAAAAAAAAAAAA"), "dry_run", true), http.StatusNotFound, ""},
		{"valid workflow", "/v1/workflows/saveWorkflow", workflow(map[string]any{"dry_run": true}), http.StatusOK, "success"},
		{"workflow without end", "/v1/workflows/saveWorkflow", workflow(map[string]any{"dry_run": true, "workflow_connections": []any{}}), http.StatusBadRequest, ""},
		{"workflow_schema that is no schema", "/v1/workflows/saveWorkflow", workflow(map[string]any{"dry_run": true, "workflow_schema": map[string]any{"type": 12}}), http.StatusBadRequest, "workflow_schema is not a valid JSON Schema"},
		{"workflow of no such id", "/v1/workflows/saveWorkflow", workflow(map[string]any{"dry_run": true, "workflow_id": "01AAAAAAAAAAAAAAAAAAAAAAAA"}), http.StatusNotFound, ""},
	} {
		r := e.do("POST", tt.path, admin, tt.body)
		if r.status != tt.status || !strings.Contains(r.msg(), tt.wantMsg) {
			t.Errorf("%s: got %d %q, want %d %q", tt.name, r.status, r.msg(), tt.status, tt.wantMsg)
		}
		if tt.status == http.StatusOK && r.body["dry_run"] != true {
			t.Errorf("%s: got %s, want dry_run: true", tt.name, r.raw)
		}
	}
	for _, list := range []string{"/v1/workflows/getOrganizationWorkflows", "/v1/adaptive-cards/getOrganizationCards"} {
		if got := items(e.get(list, admin)); len(got) != 0 {
			t.Errorf("%s after dry runs: got %d items, want none", list, len(got))
		}
	}
}

// TestTriggerHeldToWorkflowSchema: an input that breaks the version's
// workflow_schema is 400 naming the pointer and the rule, and starts
// nothing; a scheduled version whose own input breaks it is refused.
func TestTriggerHeldToWorkflowSchema(t *testing.T) {
	e := newEnv(t)
	admin := e.key("acme", "admin", "read", "execute")
	steps := func(trigger map[string]any) []any {
		return []any{
			map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": trigger},
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{"status": "SUCCEEDED"}},
		}
	}
	schema := map[string]any{"type": "object", "required": []any{"amount"}, "properties": map[string]any{"amount": map[string]any{"type": "number", "minimum": 1}}}
	saved := e.do("POST", "/v1/workflows/saveWorkflow", admin, map[string]any{
		"workflow_name": "Held", "workflow_steps": steps(map[string]any{"kind": "REQUEST"}),
		"workflow_connections": []any{map[string]any{"from": "start", "to": "done"}}, "workflow_schema": schema,
	})
	if saved.status != http.StatusOK {
		t.Fatalf("save: got %d %s", saved.status, saved.raw)
	}
	id := str(saved.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": id, "workflow_version": 1}); r.status != http.StatusOK {
		t.Fatalf("publish: got %d %s", r.status, r.raw)
	}
	for _, tt := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"amount": 0}`, http.StatusBadRequest, "/amount breaks minimum"},
		{`{"item": "chair"}`, http.StatusBadRequest, "/ breaks required"},
		{`[1]`, http.StatusBadRequest, "breaks required"},
		{`{"amount": 3}`, http.StatusOK, ""},
	} {
		r := e.do("POST", "/v1/workflows/triggerworkflow/"+id, admin, tt.body)
		if r.status != tt.status || !strings.Contains(r.msg(), tt.want) {
			t.Errorf("trigger %s: got %d %q, want %d %q", tt.body, r.status, r.msg(), tt.status, tt.want)
		}
	}
	if got := items(e.get("/v1/workflows/getWorkflowExecutionHistory", admin, "workflow_id", id)); len(got) != 1 {
		t.Errorf("executions: got %d, want only the one that matched", len(got))
	}
	r := e.do("POST", "/v1/workflows/saveWorkflow", admin, map[string]any{
		"workflow_name": "Scheduled", "workflow_steps": steps(map[string]any{"kind": "SCHEDULE", "expression": "rate(1 hour)"}),
		"workflow_connections": []any{map[string]any{"from": "start", "to": "done"}}, "workflow_schema": schema,
	})
	if r.status != http.StatusBadRequest || !strings.Contains(r.msg(), "the schedule's input") {
		t.Errorf("scheduled version its input breaks: got %d %q, want 400", r.status, r.msg())
	}
}
