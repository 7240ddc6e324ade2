package httpapi

import (
	"net/http"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// startBulkBody is the body of startBulkOperation. Its strings are
// pointers so that one given empty is refused rather than read as absent:
// a bulk operation with a filter dropped acts on more than was asked.
type startBulkBody struct {
	Action        string  `json:"action"`
	Status        *string `json:"status"`
	WorkflowID    *string `json:"workflow_id"`
	ProcessID     *string `json:"process_id"`
	TriggerType   *string `json:"trigger_type"`
	CreatedAfter  *int64  `json:"created_after"`
	CreatedBefore *int64  `json:"created_before"`
	ClientToken   *string `json:"client_token"`
}

// bulkView is a bulk operation as the API shows it: its progress, not the
// worker's bookkeeping.
type bulkView struct {
	BulkOperationID string                   `json:"bulk_operation_id"`
	OrganizationID  string                   `json:"organization_id"`
	WorkspaceID     string                   `json:"workspace_id"`
	Action          string                   `json:"action"`
	Filter          cardflow.ExecutionFilter `json:"filter"`
	ClientToken     string                   `json:"client_token,omitempty"`
	Status          string                   `json:"status"`
	Reason          string                   `json:"reason,omitempty"`
	Done            int                      `json:"done"`
	Failed          int                      `json:"failed"`
	Skipped         int                      `json:"skipped"`
	Failures        []cardflow.BulkItem      `json:"failures"`
	CreatedBy       string                   `json:"created_by"`
	CreatedOn       int64                    `json:"created_on"`
	ModifiedOn      int64                    `json:"modified_on"`
}

func viewBulk(op *cardflow.BulkOperation) bulkView {
	failures := op.Failures
	if failures == nil {
		failures = []cardflow.BulkItem{}
	}
	return bulkView{
		BulkOperationID: op.BulkOperationID, OrganizationID: op.OrganizationID, WorkspaceID: op.WorkspaceID, Action: op.Action,
		Filter: op.Filter, ClientToken: op.ClientToken, Status: op.Status, Reason: op.Reason, Done: op.Done, Failed: op.Failed,
		Skipped: op.Skipped, Failures: failures, CreatedBy: op.CreatedBy, CreatedOn: op.CreatedOn, ModifiedOn: op.ModifiedOn,
	}
}

func (s *Server) startBulkOperation(w http.ResponseWriter, r *http.Request) error {
	var body startBulkBody
	if err := decodeBody(w, r, &body); err != nil {
		return err
	}
	in := app.StartBulkInput{Action: body.Action}
	for _, f := range []struct {
		name string
		from *string
		to   *string
	}{
		{"status", body.Status, &in.Status}, {"workflow_id", body.WorkflowID, &in.WorkflowID}, {"process_id", body.ProcessID, &in.ProcessID},
		{"trigger_type", body.TriggerType, &in.TriggerType}, {"client_token", body.ClientToken, &in.ClientToken},
	} {
		if f.from == nil {
			continue
		}
		if *f.from == "" {
			return cardflow.Errorf(cardflow.EINVALID, "field %s must not be empty; leave it out instead", f.name)
		}
		*f.to = *f.from
	}
	if in.WorkflowID != "" && !ulidPattern.MatchString(in.WorkflowID) {
		return cardflow.Errorf(cardflow.EINVALID, "field workflow_id must be an id (26 characters, 0-9 and A-Z), got %q", in.WorkflowID)
	}
	if len(in.ProcessID) > 200 {
		return cardflow.Errorf(cardflow.EINVALID, "field process_id is longer than 200 characters")
	}
	for _, t := range []struct {
		name string
		from *int64
		to   *int64
	}{{"created_after", body.CreatedAfter, &in.CreatedAfter}, {"created_before", body.CreatedBefore, &in.CreatedBefore}} {
		if t.from == nil {
			continue
		}
		if *t.from < 0 || *t.from > maxEpochMillis || t.name == "created_before" && *t.from == 0 {
			return cardflow.Errorf(cardflow.EINVALID, "field %s must be a time in epoch milliseconds, from 1 to %d", t.name, int64(maxEpochMillis))
		}
		*t.to = *t.from
	}
	if body.Status == nil && body.WorkflowID == nil && body.ProcessID == nil && body.TriggerType == nil && body.CreatedAfter == nil && body.CreatedBefore == nil {
		return cardflow.Errorf(cardflow.EINVALID, "give at least one filter (status, workflow_id, process_id, trigger_type, created_after, created_before): to act on every execution, give created_before")
	}
	op, err := s.svc.StartBulkOperation(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, viewBulk(op))
}

func (s *Server) getBulkOperation(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	id := q.str("bulk_operation_id", true)
	if id != "" && !ulidPattern.MatchString(id) {
		q.fail("query parameter bulk_operation_id must be an id as startBulkOperation gave it (26 characters, 0-9 and A-Z), got %q", id)
	}
	if err := q.done(); err != nil {
		return err
	}
	op, err := s.svc.GetBulkOperation(r.Context(), id)
	if err != nil {
		return err
	}
	return okItem(w, viewBulk(op))
}
