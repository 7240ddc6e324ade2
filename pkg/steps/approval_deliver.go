package steps

import (
	"context"
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// deliverApproval stores the approval unless an earlier attempt did, and
// sends each of its recipients a copy of the card of their own, whose
// response links answer as them. After a crash the stored record says who
// the recipients are (under sequential, whose turn it is). A shared
// webhook gets the announcement once, when the record is made.
func deliverApproval(ctx context.Context, r *Run, a *cardflow.Approval) error {
	err := r.Approvals.CreateApproval(ctx, a)
	created := err == nil
	if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
		a, err = r.Approvals.GetApproval(ctx, a.OrganizationID, a.ApprovalID)
	}
	if err != nil {
		return err
	}
	if an, ok := r.Deliverer.(cardflow.ApprovalAnnouncer); ok && created {
		// At most once, and only news: the approvers' copies are what
		// counts, so a failure is logged, not the step's.
		if err := an.AnnounceApproval(ctx, a); err != nil && r.Log != nil {
			r.Log.WarnContext(ctx, "the approval was not announced to the shared webhook", "approval", a.ApprovalID, "error", cardflow.ErrorMessage(err))
		}
	}
	now := r.Now()
	for _, p := range a.Recipients() {
		if err := cardflow.DeliverApproval(ctx, r.Approvals, r.Deliverer, a, p, "", now); err != nil {
			return fmt.Errorf("deliver the card of step %s to %s: %w", r.StepID, p, err)
		}
	}
	return nil
}

// updateApprovalCards brings the posted copies of a finished approval's
// card up to date. The step leaves all the same: a copy left behind still
// answers a late click with the decision, never with a second one.
func updateApprovalCards(ctx context.Context, r *Run, a *cardflow.Approval) {
	u, ok := r.Deliverer.(cardflow.ApprovalCardUpdater)
	if !ok || len(a.Posts) == 0 {
		return
	}
	if err := u.UpdateApprovalCards(ctx, a); err != nil && r.Log != nil {
		r.Log.WarnContext(ctx, "the copies of an approval's card were not all updated", "approval", a.ApprovalID, "error", err)
	}
}
