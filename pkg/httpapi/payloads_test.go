package httpapi_test

import (
	"strconv"
	"testing"
)

// holdBody is a workflow that ends at once when its input has "skip", and
// otherwise waits for a resume and ends with the resume's "word".
func holdBody() map[string]any {
	return map[string]any{
		"workflow_name": "Hold",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "route", "name": "Route", "type": "condition", "config": map[string]any{}},
			map[string]any{"id": "hold", "name": "Hold", "type": "wait", "config": map[string]any{}},
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{"output": "{{ steps.hold.output.word }}"}},
			map[string]any{"id": "quick", "name": "Quick", "type": "end", "config": map[string]any{}},
		},
		"workflow_connections": []any{
			map[string]any{"from": "start", "to": "route"},
			map[string]any{"from": "route", "to": "quick", "when": `"skip" in input`},
			map[string]any{"from": "route", "to": "hold"},
			map[string]any{"from": "hold", "to": "done"},
		},
	}
}

// TestPayloadsAreObjects checks that an execution's input and
// output and a schema record's mock payload are JSON objects, whatever the
// trigger body was and wherever the execution is.
func TestPayloadsAreObjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	r := e.do("POST", "/v1/workflows/saveWorkflow", admin, holdBody())
	if r.status != 200 {
		t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1}); r.status != 200 {
		t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
	}
	schema := func() string {
		t.Helper()
		r := e.get("/v1/workflows/getWorkflowSchemaById", run, "workflow_id", wf, "workflow_version", "1")
		if r.status != 200 {
			t.Fatalf("getWorkflowSchemaById: got %d %s", r.status, r.raw)
		}
		item := r.body["item"].(map[string]any)
		if got := item["workflow_schema"].(map[string]any)["type"]; got != "object" {
			t.Errorf("schema of %s: got type %v, want object", jsonOf(item["workflow_mock_payload"]), got)
		}
		return jsonOf(item["workflow_mock_payload"])
	}

	for i, tc := range []struct {
		name, body   string // "" sends none
		resume       string // "" when the run ends by itself
		input        string
		waitOutput   string // output while it waits
		output, mock string
	}{
		{"object", `{"skip": true, "n": 1}`, "", `{"n":1,"skip":true}`, "", `{}`, `{"n":1,"skip":true}`},
		{"no body", "", `{"word": "done"}`, `{}`, `{}`, `{"value":"done"}`, `{"n":1,"skip":true}`},
		{"array", `[1]`, `{"word": {"a": 1}}`, `{"value":[1]}`, `{}`, `{"a":1}`, `{"value":[1]}`},
		{"number", `5`, `{"word": 7}`, `{"value":5}`, `{}`, `{"value":7}`, `{"value":5}`},
		{"empty object", `{}`, `{"word": null}`, `{}`, `{}`, `{}`, `{"value":5}`},
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		pid := "hold-" + strconv.Itoa(i)
		r := e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id="+pid, body)
		if r.status != 200 {
			t.Fatalf("%s: trigger: got %d %s", tc.name, r.status, r.raw)
		}
		id := str(r.body["service_execution_id"])
		if tc.resume != "" {
			waiting := e.awaitStatus(run, wf, id, "WAITING")
			if got := jsonOf(waiting["workflow_output_payload"]); got != tc.waitOutput {
				t.Errorf("%s: output while waiting: got %s, want %s", tc.name, got, tc.waitOutput)
			}
			if r := e.do("POST", "/v1/workflows/resumeworkflow/"+pid, run, tc.resume); r.status != 200 {
				t.Fatalf("%s: resume: got %d %s", tc.name, r.status, r.raw)
			}
		}
		done := e.awaitStatus(run, wf, id, "SUCCEEDED")
		if got := jsonOf(done["workflow_input_payload"]); got != tc.input {
			t.Errorf("%s: input: got %s, want %s", tc.name, got, tc.input)
		}
		if got := jsonOf(done["workflow_output_payload"]); got != tc.output {
			t.Errorf("%s: output: got %s, want %s", tc.name, got, tc.output)
		}
		if got := schema(); got != tc.mock {
			t.Errorf("%s: mock payload: got %s, want %s", tc.name, got, tc.mock)
		}
	}
}
