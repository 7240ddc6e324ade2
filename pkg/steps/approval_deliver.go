package steps

import (
	"context"
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// deliverApproval stores the approval unless an earlier attempt did, and
// sends each of its recipients a copy of the card of their own, whose
// response links answer as them. After a crash the stored record says who
// the recipients are (under sequential, whose turn it is).
func deliverApproval(ctx context.Context, r *Run, a *cardflow.Approval) error {
	err := r.Approvals.CreateApproval(ctx, a)
	if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
		a, err = r.Approvals.GetApproval(ctx, a.OrganizationID, a.ApprovalID)
	}
	if err != nil {
		return err
	}
	now := r.Now()
	for _, p := range a.Recipients() {
		if err := r.Deliverer.Deliver(ctx, a.DeliveryFor(p, now)); err != nil {
			return fmt.Errorf("deliver the card of step %s to %s: %w", r.StepID, p, err)
		}
	}
	return nil
}
