package boltstore

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// executionSummary is what the execution lists show of an execution. It is
// kept beside the record, written in the same transaction, so that a list
// page decodes a few hundred bytes per item instead of whole records with
// their condensed logs, payloads and step definitions, which made a page
// of 20 cost as much as 20 gets.
type executionSummary struct {
	WorkflowExecutionID  string            `json:"workflow_execution_id"`
	WorkflowID           string            `json:"workflow_id"`
	WorkflowVersion      int               `json:"workflow_version"`
	OrganizationID       string            `json:"organization_id"`
	WorkspaceID          string            `json:"workspace_id"`
	WorkflowName         string            `json:"workflow_name"`
	WorkflowCurrentState string            `json:"workflow_current_state"`
	WorkflowTriggerType  string            `json:"workflow_trigger_type"`
	Status               string            `json:"status"`
	WorkflowEventLog     cardflow.EventLog `json:"workflow_event_log"`
	ModifiedBy           *string           `json:"modified_by"`
	CreatedOn            int64             `json:"created_on"`
	ModifiedOn           int64             `json:"modified_on"`
}

func encodeSummary(e *cardflow.Execution) ([]byte, error) {
	return json.Marshal(executionSummary{
		WorkflowExecutionID: e.WorkflowExecutionID, WorkflowID: e.WorkflowID, WorkflowVersion: e.WorkflowVersion,
		OrganizationID: e.OrganizationID, WorkspaceID: e.WorkspaceID, WorkflowName: e.WorkflowDetails.WorkflowName,
		WorkflowCurrentState: e.WorkflowCurrentState, WorkflowTriggerType: e.WorkflowTriggerType, Status: e.Status,
		WorkflowEventLog: e.WorkflowEventLog, ModifiedBy: e.ModifiedBy, CreatedOn: e.CreatedOn, ModifiedOn: e.ModifiedOn,
	})
}

// decodeSummary gives a list item: an execution with the list fields set.
func decodeSummary(v []byte) (*cardflow.Execution, error) {
	var s executionSummary
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("boltstore: decode execution summary: %w", err)
	}
	return &cardflow.Execution{
		WorkflowExecutionID: s.WorkflowExecutionID, WorkflowID: s.WorkflowID, WorkflowVersion: s.WorkflowVersion,
		OrganizationID: s.OrganizationID, WorkspaceID: s.WorkspaceID, WorkflowDetails: cardflow.WorkflowDetails{WorkflowName: s.WorkflowName},
		WorkflowCurrentState: s.WorkflowCurrentState, WorkflowTriggerType: s.WorkflowTriggerType, Status: s.Status,
		WorkflowEventLog: s.WorkflowEventLog, ModifiedBy: s.ModifiedBy, CreatedOn: s.CreatedOn, ModifiedOn: s.ModifiedOn,
	}, nil
}

// encodedExecution is an execution encoded for the store: its record and
// its summary.
type encodedExecution struct {
	record, summary []byte
}

// encodeExecution encodes e as stored with the given revision. Writers
// encode before their transaction: bbolt runs one at a time.
func encodeExecution(e *cardflow.Execution, revision int64) (encodedExecution, error) {
	rec := *e
	rec.Revision = revision
	record, err := rec.MarshalRecord()
	if err != nil {
		return encodedExecution{}, err
	}
	summary, err := encodeSummary(e)
	return encodedExecution{record, summary}, err
}

// addSummaries writes the summary of every execution into a store file
// made before summaries were kept; Open calls it when it creates their
// bucket.
func addSummaries(tx *bolt.Tx) error {
	summaries := tx.Bucket(bExecutionSummaries)
	return tx.Bucket(bExecutions).ForEach(func(k, v []byte) error {
		e, err := decodeExecution(v)
		if err != nil {
			return err
		}
		s, err := encodeSummary(e)
		if err != nil {
			return err
		}
		return summaries.Put(k, s)
	})
}
