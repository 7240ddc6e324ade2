package schemacheck_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cardflow/cardflow/pkg/steps"
	"github.com/cardflow/cardflow/schemas"
	"github.com/cardflow/cardflow/schemas/schemacheck"
)

// TestSchemaFileIsGenerated fails when cardflow.schema.json drifts from
// the step kinds it is generated from.
func TestSchemaFileIsGenerated(t *testing.T) {
	want, err := steps.Kinds.DocumentSchemaJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "cardflow.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("cardflow.schema.json is not what the step kinds generate: run go generate ./schemas")
	}
	if !bytes.Equal(schemas.Cardflow, got) {
		t.Errorf("the embedded schema is not the file")
	}
}

type obj = map[string]any

func workflow(steps ...obj) obj {
	return obj{
		"kind": "Workflow", "name": "Purchase approval",
		"workflow_steps": append([]any{obj{"id": "start", "name": "start", "type": "trigger", "config": obj{"kind": "REQUEST"}}}, anys(steps)...),
		"workflow_connections": []any{obj{"from": "start", "to": "approve"}, obj{"from": "approve", "to": "done"},
			obj{"from": "approve", "to": "done", "on": "rejected"}},
	}
}

func anys(steps []obj) []any {
	out := make([]any, len(steps))
	for i, s := range steps {
		out[i] = s
	}
	return out
}

func approval(config obj) obj {
	return obj{"id": "approve", "name": "Approve", "type": "approval", "config": config}
}

var done = obj{"id": "done", "name": "done", "type": "end", "config": obj{}}

// TestDocuments: the schema takes what apply takes and refuses the keys
// the service refuses, naming where.
func TestDocuments(t *testing.T) {
	people := []any{"ann@example.com", "bob@example.com"}
	for _, tt := range []struct {
		name string
		doc  obj
		want string // a part of the error at this JSON pointer, "" for valid
	}{
		{"card", obj{"kind": "Card", "name": "Purchase", "card_payload": obj{"type": "AdaptiveCard", "version": "1.5"}}, ""},
		{"card without payload", obj{"kind": "Card", "name": "Purchase"}, "card_payload"},
		{"approval by card id", workflow(approval(obj{"card_id": "01J", "card_version": 2, "approvers": people, "policy": "all"}), done), ""},
		{"approval by card name", workflow(approval(obj{"card": "Purchase", "approvers": people, "policy": "first", "reminders": []any{"PT24H"}}), done), ""},
		{"card name and id", workflow(approval(obj{"card": "Purchase", "card_id": "01J", "approvers": people, "policy": "all"}), done), "/workflow_steps/1/config"},
		{"card name and version", workflow(approval(obj{"card": "Purchase", "card_version": 1, "approvers": people, "policy": "all"}), done), "/workflow_steps/1/config"},
		{"unknown config key", workflow(approval(obj{"card_id": "01J", "approvers": people, "policy": "all", "channels": []any{"x"}}), done), "channels"},
		{"unknown escalation key", workflow(approval(obj{"card_id": "01J", "approvers": people, "policy": "all",
			"escalation": obj{"after": "PT1H", "to": people, "cc": "x"}}), done), "cc"},
		{"unknown delivery key", workflow(approval(obj{"card_id": "01J", "approvers": people, "policy": "all", "delivery": obj{"type": "bot", "channel": "x"}}), done), "channel"},
		{"unknown Teams profile key", func() obj {
			w := workflow(approval(obj{"card_id": "01J", "approvers": people, "policy": "all"}), done)
			w["workflow_integrations"] = obj{"teams": obj{"type": "webhook", "webhook_url": "https://x"}}
			return w
		}(), "webhook_url"},
		{"unknown step kind", workflow(obj{"id": "approve", "name": "x", "type": "approve"}, done), "/workflow_steps/1/type"},
		{"unknown document key", obj{"kind": "Card", "name": "x", "card_payload": obj{}, "card_name": "x"}, "card_name"},
		{"unknown kind", obj{"kind": "Secret", "name": "x"}, "kind"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := schemacheck.Validate(tt.doc)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			var ve *jsonschema.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want a validation error", err)
			}
			if got := ve.Error(); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to name %q", got, tt.want)
			}
		})
	}
}

// TestSaveWorkflowEvent: the saveWorkflow body of the sample API Gateway
// event, as an apply document, fits the schema.
func TestSaveWorkflowEvent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "events", "saveWorkflow.json"))
	if err != nil {
		t.Fatal(err)
	}
	var event struct{ Body string }
	if err := json.Unmarshal(b, &event); err != nil {
		t.Fatal(err)
	}
	var body obj
	if err := json.Unmarshal([]byte(event.Body), &body); err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Validate(document(body)); err != nil {
		t.Errorf("got %v, want no error", err)
	}
}

// document turns a saveWorkflow body into an apply document.
func document(body obj) obj {
	doc := obj{"kind": "Workflow", "name": body["workflow_name"]}
	for _, k := range []string{"workflow_steps", "workflow_connections", "workflow_integrations", "workflow_schema"} {
		if v, ok := body[k]; ok {
			doc[k] = v
		}
	}
	return doc
}
