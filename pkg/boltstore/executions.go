package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

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
		return nil, &cardflow.UnreadableError{Err: fmt.Errorf("boltstore: decode execution summary: %w", err)}
	}
	return &cardflow.Execution{
		WorkflowExecutionID: s.WorkflowExecutionID, WorkflowID: s.WorkflowID, WorkflowVersion: s.WorkflowVersion,
		OrganizationID: s.OrganizationID, WorkspaceID: s.WorkspaceID, WorkflowDetails: cardflow.WorkflowDetails{WorkflowName: s.WorkflowName},
		WorkflowCurrentState: s.WorkflowCurrentState, WorkflowTriggerType: s.WorkflowTriggerType, Status: s.Status,
		WorkflowEventLog: s.WorkflowEventLog, ModifiedBy: s.ModifiedBy, CreatedOn: s.CreatedOn, ModifiedOn: s.ModifiedOn,
	}, nil
}

// encodedExecution is an execution encoded for the store in three parts:
// the view, which is the execution as the API shows it (read as it is by
// GetExecutionJSON), the engine's state, and the list summary. The
// revision has a bucket of its own.
type encodedExecution struct {
	view, state, summary []byte
}

// encodeExecution encodes e for the store. Writers encode before their
// transaction: bbolt runs one at a time.
func encodeExecution(e *cardflow.Execution) (encodedExecution, error) {
	view, err := json.Marshal(e)
	if err != nil {
		return encodedExecution{}, err
	}
	state, err := json.Marshal(e.State)
	if err != nil {
		return encodedExecution{}, err
	}
	summary, err := encodeSummary(e)
	return encodedExecution{view, state, summary}, err
}

// decodeExecution joins the parts of a stored execution. When they do not
// decode, the error carries the execution's head: the parts pruned of what
// lies too deep, joined, if they decode so.
func decodeExecution(view, state, revision []byte) (*cardflow.Execution, error) {
	e, err := joinExecution(view, state, revision)
	if err == nil {
		return e, nil
	}
	ue := &cardflow.UnreadableError{Err: err}
	if head, err := joinExecution(cardflow.Prune(view), cardflow.Prune(state), revision); err == nil {
		ue.Head = head
	}
	return nil, ue
}

func joinExecution(view, state, revision []byte) (*cardflow.Execution, error) {
	e := new(cardflow.Execution)
	if err := json.Unmarshal(view, e); err != nil {
		return nil, fmt.Errorf("boltstore: decode execution: %w", err)
	}
	if err := json.Unmarshal(state, &e.State); err != nil {
		return nil, fmt.Errorf("boltstore: decode execution state: %w", err)
	}
	if len(revision) != 8 {
		return nil, fmt.Errorf("boltstore: execution %s has no revision", e.WorkflowExecutionID)
	}
	e.Revision = int64(binary.BigEndian.Uint64(revision))
	return e, nil
}

// splitStates rewrites the executions of a store file made when the
// executions bucket held whole records (state and revision included) as a
// view and a state; Open calls it when it creates the states bucket.
func splitStates(tx *bolt.Tx) error {
	executions, states := tx.Bucket(bExecutions), tx.Bucket(bExecutionStates)
	// Collected first: a bucket must not change while ForEach walks it.
	var keys, records [][]byte
	err := executions.ForEach(func(k, v []byte) error {
		keys, records = append(keys, k), append(records, v)
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		e := new(cardflow.Execution)
		if err := e.UnmarshalRecord(records[i]); err != nil {
			return fmt.Errorf("boltstore: decode execution: %w", err)
		}
		enc, err := encodeExecution(e)
		if err != nil {
			return err
		}
		if err := states.Put(k, enc.state); err != nil {
			return err
		}
		if err := executions.Put(k, enc.view); err != nil {
			return err
		}
	}
	return nil
}

// addSummaries writes the summary of every execution into a store file
// made before summaries were kept; Open calls it when it creates their
// bucket.
func addSummaries(tx *bolt.Tx) error {
	summaries := tx.Bucket(bExecutionSummaries)
	return tx.Bucket(bExecutions).ForEach(func(k, v []byte) error {
		var e cardflow.Execution
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("boltstore: decode execution: %w", err)
		}
		s, err := encodeSummary(&e)
		if err != nil {
			return err
		}
		return summaries.Put(k, s)
	})
}

// File formats, in the meta bucket: Open brings an older file up to
// fileFormat and records it.
const (
	// formatObjectPayloads: execution payloads are JSON objects.
	formatObjectPayloads = 1
	fileFormat           = formatObjectPayloads
)

var formatKey = []byte("format")

// formatOf returns the format of an open file; 0 for files from before
// formats were recorded.
func formatOf(tx *bolt.Tx) int {
	b := tx.Bucket(bMeta)
	if b == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(b.Get(formatKey)))
	return n
}

// objectPayloads rewrites the views of executions whose input or output
// payload is not a JSON object (a trigger body [1], an end step's "done",
// null while running), as cardflow.Execution reads them, so that
// GetExecutionJSON, which hands the view out as it is, shows objects too.
func objectPayloads(tx *bolt.Tx) error {
	executions := tx.Bucket(bExecutions)
	var keys, views [][]byte
	err := executions.ForEach(func(k, v []byte) error {
		var p struct {
			Input  json.RawMessage `json:"workflow_input_payload"`
			Output json.RawMessage `json:"workflow_output_payload"`
		}
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("boltstore: decode execution: %w", err)
		}
		if !isObject(p.Input) || !isObject(p.Output) {
			// Keys and values are only valid until the bucket changes.
			keys, views = append(keys, bytes.Clone(k)), append(views, bytes.Clone(v))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		var e cardflow.Execution
		if err := json.Unmarshal(views[i], &e); err != nil {
			return fmt.Errorf("boltstore: decode execution: %w", err)
		}
		view, err := json.Marshal(&e)
		if err != nil {
			return err
		}
		if err := executions.Put(k, view); err != nil {
			return err
		}
	}
	return nil
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }
