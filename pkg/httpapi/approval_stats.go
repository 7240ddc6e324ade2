package httpapi

import (
	"net/http"
	"regexp"

	"github.com/cardflow/cardflow/pkg/app"
)

// dayPattern matches a day as the statistics name them.
var dayPattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// getApprovalStats answers how the organization's approvals went: counts,
// cycle times, load per approver and a series by day.
func (s *Server) getApprovalStats(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	in := app.ApprovalStatsInput{WorkflowID: q.optionalID("workflow_id"), From: q.str("from", false), To: q.str("to", false)}
	for name, v := range map[string]string{"from": in.From, "to": in.To} {
		if q.values.Has(name) && !dayPattern.MatchString(v) {
			q.fail("query parameter %s must be a day such as 2026-11-29 (UTC), got %q", name, v)
		}
	}
	if err := q.done(); err != nil {
		return err
	}
	out, err := s.svc.GetApprovalStats(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, out)
}
