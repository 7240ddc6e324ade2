package steps_test

import (
	"encoding/json"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/steps"
)

// FuzzValidateDefinition feeds saveWorkflow bodies to the definition rules
// with the registered kinds: whatever the steps, their configs and the
// connections, validation answers nil or a VALIDATION_ERROR with a message,
// and never panics or loops.
func FuzzValidateDefinition(f *testing.F) {
	seed, err := json.Marshal(approval())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"workflow_name":"x","workflow_steps":[{"id":"a","type":"trigger","config":{"kind":"SCHEDULE","expression":"rate(1 minute)"}},{"id":"b","type":"end"}],"workflow_connections":[{"from":"a","to":"b"},{"from":"b","to":"a"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var w cardflow.Workflow
		if json.Unmarshal(body, &w) != nil {
			return
		}
		err := w.ValidateDefinition(steps.Kinds)
		if err == nil {
			return
		}
		if got, want := cardflow.ErrorCode(err), cardflow.EINVALID; got != want {
			t.Fatalf("got code %s (%v), want %s", got, err, want)
		}
		if cardflow.ErrorMessage(err) == "" {
			t.Fatal("got an error without a message")
		}
	})
}
