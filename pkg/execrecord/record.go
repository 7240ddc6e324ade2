package execrecord

import (
	"encoding/json"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// executionFields is cardflow.Execution without its methods, for encoding
// it field by field.
type executionFields cardflow.Execution

// withPayloads returns e's fields with both payloads objects, as
// cardflow.Execution's MarshalJSON writes them.
func withPayloads(e *cardflow.Execution) executionFields {
	f := executionFields(*e)
	f.WorkflowInputPayload, f.WorkflowOutputPayload = cardflow.PayloadOf(e.WorkflowInputPayload), cardflow.PayloadOf(e.WorkflowOutputPayload)
	return f
}

// record is an execution whole, with what the API does not show: the
// layout before parts, which Split and Join read as the head.
type record struct {
	executionFields
	State    cardflow.ExecutionState `json:"state"`
	Revision int64                   `json:"revision"`
}

// Marshal encodes e whole, with its state and revision: the record of the
// layout before parts.
func Marshal(e *cardflow.Execution) ([]byte, error) {
	return json.Marshal(record{executionFields: withPayloads(e), State: e.State, Revision: e.Revision})
}

// Unmarshal decodes what Marshal wrote, or a head. The execution's
// UnmarshalJSON reads the state and revision with it, and reads payloads
// that are not objects, which records from before payloads were always
// objects may hold, as cardflow.PayloadOf makes them.
func Unmarshal(b []byte) (*cardflow.Execution, error) {
	e := new(cardflow.Execution)
	if err := json.Unmarshal(b, e); err != nil {
		return nil, err
	}
	return e, nil
}
