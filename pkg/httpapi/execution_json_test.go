package httpapi_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// storeOnly hides every method but the Store port's, so a service over it
// cannot read executions encoded.
type storeOnly struct{ cardflow.Store }

// TestExecutionReadEitherWay reads the sample execution through HTTP, where
// the store hands it out encoded, and through a service over a store that
// does not: both give the same bytes.
func TestExecutionReadEitherWay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, ok := e.store.(cardflow.ExecutionJSONStore); !ok {
		t.Fatal("the embedded store does not keep executions encoded")
	}
	ids := loadSample(t, e, "org-a")
	r := e.get("/v1/workflows/getWorkflowExecutionById", e.key("org-a", "read"), "workflow_id", ids.ApprovalWorkflowID, "workflow_execution_id", ids.ExecutionID)
	if r.status != 200 {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
	item, _ := r.body["item"].(map[string]any)
	if item["workflow_execution_id"] != ids.ExecutionID || item["condensed_logs"] == nil {
		t.Errorf("got item %v, want the sample execution with its logs", item)
	}

	other, err := app.New(storeOnly{e.store})
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := other.GetExecutionJSON(as("org-a"), ids.ApprovalWorkflowID, ids.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(r.raw), `{"message":"success","item":`+string(encoded)+"}\n"; got != want {
		t.Errorf("answers differ:\nstored encoded: %s\nencoded on read: %s", got, want)
	}
	if _, err := other.GetExecutionJSON(as("org-b"), ids.ApprovalWorkflowID, ids.ExecutionID); cardflow.ErrorCode(err) != cardflow.ENOTFOUND {
		t.Errorf("another organization: got %v, want NOT_FOUND", err)
	}
}
