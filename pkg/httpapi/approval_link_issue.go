package httpapi

import (
	"net/http"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// WithApprovalLinks adds POST /v1/approvals/issueApprovalLinks, with which
// an admin of local mode gets an approver's personal links for testing.
// Like WithOutbox, the option adds the route, so a program without it
// (the functions on AWS) links no handler.
func WithApprovalLinks() Option {
	return func(s *Server) {
		s.add(IssueApprovalLinks.routes(s))
	}
}

func (s *Server) issueApprovalLinks(w http.ResponseWriter, r *http.Request) error {
	var in app.IssueLinksInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	if in.ApprovalID != "" && !approvalIDPattern.MatchString(in.ApprovalID) {
		return cardflow.Errorf(cardflow.EINVALID, "approval_id must be an approval id as the service gave it (an execution id, '-' and a number), got %q", in.ApprovalID)
	}
	out, err := s.svc.IssueApprovalLinks(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, out)
}
