package httpapi

import (
	"net/http"
	"regexp"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// approvalIDPattern matches an approval id: its execution's ULID and the
// number of the wait.
var approvalIDPattern = regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}-[0-9]{4,6}$`)

// approvalID reads an approval id; one the service cannot have given out
// is refused rather than answered "not found" or, as a page key, silently
// starting the list over.
func (q *query) approvalID(name string, required bool) string {
	v := q.str(name, required)
	if (v != "" || q.values.Has(name)) && !approvalIDPattern.MatchString(v) {
		q.fail("query parameter %s must be an approval id as the service gave it (an execution id, '-' and a number), got %q", name, v)
		return ""
	}
	return v
}

func (s *Server) getPendingApprovals(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	in := app.PendingApprovalsInput{Approver: q.person("approver"), WorkflowID: q.optionalID("workflow_id")}
	in.Page.Limit = q.limit()
	if v := q.oneOf("overdue", "", "true", "false"); v != "" {
		overdue := v == "true"
		in.Overdue = &overdue
	}
	if older := q.str("older_than", false); older != "" || q.values.Has("older_than") {
		d, err := cardflow.ParseAge(older)
		if err != nil {
			q.fail("query parameter older_than must be an ISO 8601 duration such as PT24H: %v", err)
		}
		in.OlderThan = d
	}
	// The page key's organization is the caller's; it is read so that
	// lastKey can be sent back as it came.
	q.str("organization_id", false)
	if id := q.approvalID("approval_id", false); id != "" {
		in.Page.After = &cardflow.ApprovalKey{OrganizationID: cardflow.PrincipalFromContext(r.Context()).OrganizationID, ApprovalID: id}
	}
	if err := q.done(); err != nil {
		return err
	}
	page, err := s.svc.ListPendingApprovals(r.Context(), in)
	if err != nil {
		return err
	}
	return okList(w, page.Items, page.LastKey)
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	id := q.approvalID("approval_id", true)
	if err := q.done(); err != nil {
		return err
	}
	a, err := s.svc.GetApproval(r.Context(), id)
	if err != nil {
		return err
	}
	return okItem(w, a)
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) error {
	var in app.AnswerApprovalInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	res, err := s.svc.AnswerApproval(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, res.Approval)
}

func (s *Server) reassignApproval(w http.ResponseWriter, r *http.Request) error {
	var in app.ReassignApprovalInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	a, err := s.svc.ReassignApproval(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, a)
}

func (s *Server) overrideApproval(w http.ResponseWriter, r *http.Request) error {
	var in app.OverrideApprovalInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	a, err := s.svc.OverrideApproval(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, a)
}
