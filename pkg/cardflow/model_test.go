package cardflow_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/jsonschema"
)

func TestPayloadOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string // JSON
		want string
	}{
		{`{"amount": 2500}`, `{"amount":2500}`},
		{`{}`, `{}`},
		{`null`, `{}`},
		{`[1]`, `{"value":[1]}`},
		{`5`, `{"value":5}`},
		{`"done"`, `{"value":"done"}`},
		{`false`, `{"value":false}`},
	}
	for _, tt := range tests {
		var v any
		if err := json.Unmarshal([]byte(tt.in), &v); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(cardflow.PayloadOf(v))
		if string(got) != tt.want {
			t.Errorf("PayloadOf(%s): got %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestExecutionPayloads checks that an execution's payloads are objects
// however it was built: {} where nothing is set (pkg/execrecord checks
// the stored records).
func TestExecutionPayloads(t *testing.T) {
	t.Parallel()
	running := &cardflow.Execution{WorkflowExecutionID: "ex-1", Status: cardflow.ExecRunning, WorkflowInputPayload: map[string]any{"amount": 2500.0}}
	view, err := json.Marshal(running)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(view, &got); err != nil {
		t.Fatal(err)
	}
	if in, out := string(got["workflow_input_payload"]), string(got["workflow_output_payload"]); in != `{"amount":2500}` || out != `{}` {
		t.Errorf("view of a running execution: got input %s and output %s, want {\"amount\":2500} and {}", in, out)
	}
}

// TestSchemaRecordPayloads reads schema records from before mock payloads
// were always objects: the payload and its schema read as an input of
// today would give them.
func TestSchemaRecordPayloads(t *testing.T) {
	t.Parallel()
	for _, old := range []string{`[1, 2]`, `5`, `"x"`, `null`, `{"amount": 5}`} {
		var v any
		if err := json.Unmarshal([]byte(old), &v); err != nil {
			t.Fatal(err)
		}
		record, _ := json.Marshal(map[string]any{
			"organization_id": "org-1", "workflow_id": "wf-1", "workflow_version": 2,
			"workflow_mock_payload": v, "workflow_schema": jsonschema.Infer(v),
		})
		var sc cardflow.Schema
		if err := sc.UnmarshalRecord(record); err != nil {
			t.Fatal(err)
		}
		want := cardflow.PayloadOf(v)
		if sc.OrganizationID != "org-1" || sc.WorkflowVersion != 2 || !reflect.DeepEqual(sc.WorkflowMockPayload, want) {
			t.Errorf("mock payload %s: got %s version %d mock %v, want org-1 version 2 mock %v", old, sc.OrganizationID, sc.WorkflowVersion, sc.WorkflowMockPayload, want)
		}
		if got, want := toJSON(sc.WorkflowSchema), toJSON(jsonschema.Infer(want)); got != want {
			t.Errorf("mock payload %s: got schema %s, want %s", old, got, want)
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
