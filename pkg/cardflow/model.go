// Package cardflow holds the domain of the service: records, error codes,
// the principal of a request and the ports adapters implement. It imports no
// infrastructure.
package cardflow

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Workflow and card statuses.
const (
	StatusDraft  = "DRAFT"
	StatusActive = "ACTIVE"
)

// Flag is a boolean that travels as the string "true" or "false", the way the
// service interface writes `latest`.
type Flag bool

// MarshalJSON writes the flag as a JSON string.
func (f Flag) MarshalJSON() ([]byte, error) {
	if f {
		return []byte(`"true"`), nil
	}
	return []byte(`"false"`), nil
}

// UnmarshalJSON reads the strings MarshalJSON writes.
func (f *Flag) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"true"`:
		*f = true
	case `"false"`:
		*f = false
	default:
		return fmt.Errorf("latest must be \"true\" or \"false\", got %s", b)
	}
	return nil
}

// Step is one state of a workflow graph.
type Step struct {
	ID     string         `json:"id"`
	Name   string         `json:"name"`
	Type   string         `json:"type"`
	Config map[string]any `json:"config"`
}

// Connection is an edge of a workflow graph. An edge without When is the
// default; On names a non-success exit ("error", "timeout").
type Connection struct {
	From string `json:"from"`
	To   string `json:"to"`
	When string `json:"when,omitempty"`
	On   string `json:"on,omitempty"`
}

// Workflow is one version of a workflow definition.
type Workflow struct {
	OrganizationID        string         `json:"organization_id"`
	WorkspaceID           string         `json:"workspace_id"`
	WorkflowID            string         `json:"workflow_id"`
	WorkflowName          string         `json:"workflow_name"`
	WorkflowVersion       int            `json:"workflow_version"`
	WorkflowStatus        string         `json:"workflow_status"`
	WorkflowStatusVersion string         `json:"workflow_status_version"`
	Latest                Flag           `json:"latest"`
	WorkflowIntegrations  map[string]any `json:"workflow_integrations"`
	WorkflowSteps         []Step         `json:"workflow_steps"`
	WorkflowConnections   []Connection   `json:"workflow_connections"`
	WorkflowSchema        map[string]any `json:"workflow_schema"`
	CreatedBy             string         `json:"created_by"`
	ModifiedBy            *string        `json:"modified_by"`
	CreatedOn             int64          `json:"created_on"`
	ModifiedOn            int64          `json:"modified_on"`
}

// SetStatus sets the status and the derived status_version (ACTIVE_3).
func (w *Workflow) SetStatus(status string) {
	w.WorkflowStatus = status
	w.WorkflowStatusVersion = status + "_" + strconv.Itoa(w.WorkflowVersion)
}

// Card is one version of an adaptive card.
type Card struct {
	CardID          string         `json:"card_id"`
	CardVersion     int            `json:"card_version"`
	CardName        string         `json:"card_name"`
	Status          string         `json:"status"`
	StatusVersion   string         `json:"status_version"`
	Latest          Flag           `json:"latest"`
	CardPayload     map[string]any `json:"card_payload"`
	WorkflowID      string         `json:"workflow_id"`
	WorkflowVersion int            `json:"workflow_version"`
	OrganizationID  string         `json:"organization_id"`
	WorkspaceID     string         `json:"workspace_id"`
	CreatedBy       string         `json:"created_by"`
	ModifiedBy      string         `json:"modified_by"`
	CreatedOn       int64          `json:"created_on"`
	ModifiedOn      int64          `json:"modified_on"`
}

// SetStatus sets the status and the derived status_version (ACTIVE-3).
func (c *Card) SetStatus(status string) {
	c.Status = status
	c.StatusVersion = status + "-" + strconv.Itoa(c.CardVersion)
}

// Execution statuses.
const (
	ExecRunning   = "RUNNING"
	ExecWaiting   = "WAITING"
	ExecSucceeded = "SUCCEEDED"
	ExecFailed    = "FAILED"
	ExecCancelled = "CANCELLED"
	ExecTimedOut  = "TIMED_OUT"
)

// Trigger types of an execution.
const (
	TriggerRequest  = "REQUEST"
	TriggerSchedule = "SCHEDULE"
)

// Event is one entry of an execution's event log.
type Event struct {
	At     int64  `json:"at"`
	Type   string `json:"type"`
	StepID string `json:"step_id,omitempty"`
	Step   string `json:"step,omitempty"`
	// Actor is who caused the event, where a person did (an approver).
	Actor   string `json:"actor,omitempty"`
	Message string `json:"message,omitempty"`
}

// EventLog is an execution's event log. Total counts every event ever
// recorded, so a trimmed log still tells how much was left out.
type EventLog struct {
	Events []Event `json:"events"`
	Total  int     `json:"total"`
}

// Trimmed returns the last n events of the log.
func (l EventLog) Trimmed(n int) EventLog {
	if len(l.Events) <= n {
		return l
	}
	return EventLog{Events: l.Events[len(l.Events)-n:], Total: l.Total}
}

// StepLog is the condensed input and output of one step.
type StepLog struct {
	Input      any    `json:"input"`
	Output     any    `json:"output"`
	Status     string `json:"status,omitempty"`
	StartedOn  int64  `json:"started_on,omitempty"`
	FinishedOn int64  `json:"finished_on,omitempty"`
}

// WorkflowDetails is the structure of the workflow version an execution runs.
type WorkflowDetails struct {
	WorkflowName        string       `json:"workflow_name"`
	WorkflowSteps       []Step       `json:"workflow_steps"`
	WorkflowConnections []Connection `json:"workflow_connections"`
}

// Execution is one run of a workflow version (as openapi.yaml describes it, plus status and
// modified_on).
type Execution struct {
	WorkflowExecutionID   string             `json:"workflow_execution_id"`
	WorkflowID            string             `json:"workflow_id"`
	WorkflowVersion       int                `json:"workflow_version"`
	OrganizationID        string             `json:"organization_id"`
	WorkspaceID           string             `json:"workspace_id"`
	WorkflowCurrentState  string             `json:"workflow_current_state"`
	WorkflowTriggerType   string             `json:"workflow_trigger_type"`
	TriggeredBy           string             `json:"triggered_by"` // see Principal.Requester
	Status                string             `json:"status"`
	WorkflowEventLog      EventLog           `json:"workflow_event_log"`
	CondensedLogs         map[string]StepLog `json:"condensed_logs"`
	WorkflowInputPayload  map[string]any     `json:"workflow_input_payload"`
	WorkflowOutputPayload map[string]any     `json:"workflow_output_payload"`
	WorkflowDetails       WorkflowDetails    `json:"workflow_details"`
	ModifiedBy            *string            `json:"modified_by"`
	CreatedOn             int64              `json:"created_on"`
	ModifiedOn            int64              `json:"modified_on"`

	// State, Revision and Stored are kept by the store but are not part of
	// the API shape.
	State    ExecutionState `json:"-"`
	Revision int64          `json:"-"`
	// Stored is the store's handle on the record as it read or last wrote
	// it, which its next write takes back; nil while no store holds e.
	Stored StoredRecord `json:"-"`
}

// MaxStateBytes bounds the state of one execution: its input and, for every
// step, its output and condensed log, encoded as JSON. A write that would
// take an execution past it fails with ETOOLARGE, and the engine ends the
// execution FAILED saying so.
const MaxStateBytes = 1 << 20

// StoredRecord is what a store's read or write leaves on an execution: its
// record as read or last written, from which the next write stores only
// what changed (pkg/execrecord). The domain reads only the status it had,
// to tell whether a write ends or reopens the execution, and its size,
// which a cache of executions counts.
type StoredRecord interface {
	// Status is the execution's status as stored.
	Status() string
	// Bytes is the size of the stored record.
	Bytes() int
}

// EndsOnWrite reports whether storing e now ends it: its status is final
// and it was open when read or last written (or that is not known).
func (e *Execution) EndsOnWrite() bool {
	if e.Open() {
		return false
	}
	return e.Stored == nil || e.Stored.Status() == ExecRunning || e.Stored.Status() == ExecWaiting
}

// ReopensOnWrite reports whether storing e now opens it again (a redrive):
// its status is open and it was final when read or last written.
func (e *Execution) ReopensOnWrite() bool {
	if !e.Open() || e.Stored == nil {
		return false
	}
	switch e.Stored.Status() {
	case ExecSucceeded, ExecFailed, ExecCancelled, ExecTimedOut:
		return true
	}
	return false
}

// StoredBytes is the size of the record of e as it was read or last
// written, 0 when no store has held it: what a cache of executions
// counts.
func (e *Execution) StoredBytes() int {
	if e.Stored == nil {
		return 0
	}
	return e.Stored.Bytes()
}

// ExecutionOutline is what a caller that may act on an execution, but not
// read it, learns of it: ids, status, current step and last change; no
// payloads, logs or events, which may hold business data.
type ExecutionOutline struct {
	WorkflowExecutionID  string  `json:"workflow_execution_id"`
	WorkflowID           string  `json:"workflow_id"`
	WorkflowVersion      int     `json:"workflow_version"`
	OrganizationID       string  `json:"organization_id"`
	WorkspaceID          string  `json:"workspace_id"`
	WorkflowCurrentState string  `json:"workflow_current_state"`
	Status               string  `json:"status"`
	ModifiedBy           *string `json:"modified_by"`
	CreatedOn            int64   `json:"created_on"`
	ModifiedOn           int64   `json:"modified_on"`
}

// Outline returns the outline of e.
func (e *Execution) Outline() ExecutionOutline {
	return ExecutionOutline{
		WorkflowExecutionID: e.WorkflowExecutionID, WorkflowID: e.WorkflowID, WorkflowVersion: e.WorkflowVersion,
		OrganizationID: e.OrganizationID, WorkspaceID: e.WorkspaceID, WorkflowCurrentState: e.WorkflowCurrentState,
		Status: e.Status, ModifiedBy: e.ModifiedBy, CreatedOn: e.CreatedOn, ModifiedOn: e.ModifiedOn,
	}
}

// Schema is the data schema record of a workflow version. The
// organization is kept for access checks and is not part of the API shape.
type Schema struct {
	OrganizationID      string         `json:"-"`
	WorkflowID          string         `json:"workflow_id"`
	WorkflowVersion     int            `json:"workflow_version"`
	WorkflowMockPayload map[string]any `json:"workflow_mock_payload"`
	WorkflowSchema      map[string]any `json:"workflow_schema"`
	CreatedBy           string         `json:"created_by"`
	ModifiedBy          *string        `json:"modified_by"`
	CreatedOn           int64          `json:"created_on"`
	ModifiedOn          int64          `json:"modified_on"`
}

// schemaRecord is Schema with its organization, as adapters persist it.
type schemaRecord struct {
	OrganizationID string `json:"organization_id"`
	Schema
}

// MarshalRecord encodes s with its organization, for adapters that store JSON.
func (s *Schema) MarshalRecord() ([]byte, error) {
	return json.Marshal(schemaRecord{OrganizationID: s.OrganizationID, Schema: *s})
}

// UnmarshalRecord decodes what MarshalRecord wrote. A mock payload that is
// not an object, which records from before payloads were always objects
// may hold, reads as PayloadOf makes it, and its schema with it.
func (s *Schema) UnmarshalRecord(b []byte) error {
	*s = Schema{}
	r := struct {
		OrganizationID string `json:"organization_id"`
		*schemaFields
		Mock any `json:"workflow_mock_payload"`
	}{schemaFields: (*schemaFields)(s)}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	s.OrganizationID, s.WorkflowMockPayload = r.OrganizationID, PayloadOf(r.Mock)
	if _, ok := r.Mock.(map[string]any); !ok {
		s.WorkflowSchema = objectSchema(s.WorkflowSchema, r.Mock != nil)
	}
	return nil
}

// objectSchema returns the schema of a payload that PayloadOf made of a
// value with the given schema: an object with the value under
// PayloadValueKey, or nothing when wrapped is false (the value was null).
func objectSchema(value map[string]any, wrapped bool) map[string]any {
	out := map[string]any{"type": "object"}
	if dialect, ok := value["$schema"]; ok {
		out["$schema"] = dialect
	}
	if wrapped {
		inner := make(map[string]any, len(value))
		for k, v := range value {
			if k != "$schema" {
				inner[k] = v
			}
		}
		out["properties"] = map[string]any{PayloadValueKey: inner}
		out["required"] = []any{PayloadValueKey}
	}
	return out
}

// schemaFields is Schema without its methods, for decoding it field by field.
type schemaFields Schema

// PayloadValueKey is where a payload keeps a JSON value that is not an
// object: a trigger body [1] is the input {"value": [1]}.
const PayloadValueKey = "value"

// PayloadOf returns v as an execution's input or output payload, which is
// always a JSON object: an object as it is, nothing (nil)
// as {}, and any other value under PayloadValueKey.
func PayloadOf(v any) map[string]any {
	switch t := v.(type) {
	case nil:
		return map[string]any{}
	case map[string]any:
		if t == nil {
			return map[string]any{}
		}
		return t
	}
	return map[string]any{PayloadValueKey: v}
}
