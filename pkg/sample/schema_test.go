package sample

import (
	"encoding/json"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/schemas/schemacheck"
)

// TestDefinitionsFitTheSchema: the sample cards and workflows, written as
// apply documents, fit schemas/cardflow.schema.json.
func TestDefinitionsFitTheSchema(t *testing.T) {
	cards := map[string]obj{
		"approval":   approvalCardPayload("Purchase request for ${requester}"),
		"invoice":    invoiceCardPayload(),
		"onboarding": onboardingCardPayload(true),
	}
	for name, payload := range cards {
		doc := obj{"kind": "Card", "name": name, "card_payload": payload}
		if err := schemacheck.Validate(doc); err != nil {
			t.Errorf("card %s: got %v, want no error", name, err)
		}
	}
	for _, w := range []app.SaveWorkflowInput{
		approvalWorkflow("c1", 500), twoApproverWorkflow("c1", Approvers),
		scheduledWorkflow("cron(0 8 ? * MON-FRI *)"), onboardingWorkflow("c2"),
	} {
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var doc obj
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		doc["kind"], doc["name"] = "Workflow", doc["workflow_name"]
		delete(doc, "workflow_name")
		delete(doc, "workflow_id")
		for k, v := range doc {
			if v == nil {
				delete(doc, k)
			}
		}
		if err := schemacheck.Validate(doc); err != nil {
			t.Errorf("workflow %s: got %v, want no error", w.WorkflowName, err)
		}
	}
}
