package cardflow

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ApprovalCancelled is the final status of an approval whose execution
// ended (cancelled, failed, timed out) before it was decided: it leaves
// the inboxes and takes no more answers.
const ApprovalCancelled = "CANCELLED"

// CancelApproval closes the approval that ex left open in its wait when it
// ended: CANCELLED, by ex's modifier when one is known. An approval that is
// decided, or that there is none of, stays as it is. The posted copies of
// its card are brought up to date through u, when there is one; a failure
// there is not the caller's (the copies answer 409 all the same).
//
// Every end of an execution calls it once the end is stored (the engine's
// finish, cancel, giving up); an answer that finds an open approval of an
// ended execution closes it too, in case the one who ended it stopped in
// between.
func CancelApproval(ctx context.Context, s ApprovalStore, u ApprovalCardUpdater, ex *Execution, wait int, now time.Time) error {
	if wait <= 0 {
		return nil
	}
	for {
		a, err := s.GetApproval(ctx, ex.OrganizationID, ApprovalIDOf(ex.WorkflowExecutionID, wait))
		if ErrorCode(err) == ENOTFOUND {
			return nil
		}
		if err != nil {
			return err
		}
		if !a.Open() || a.ExecutionID != ex.WorkflowExecutionID {
			return nil
		}
		a.Status, a.DecidedOn = ApprovalCancelled, now.UnixMilli()
		if ex.ModifiedBy != nil && ex.Status == ExecCancelled {
			a.DecidedBy = *ex.ModifiedBy
		}
		err = s.PutApproval(ctx, a)
		if ErrorCode(err) == ECONFLICT {
			continue // an answer came meanwhile: look again
		}
		if err != nil {
			return err
		}
		if u != nil && len(a.Posts) > 0 {
			_ = u.UpdateApprovalCards(ctx, a)
		}
		return nil
	}
}

// ClosedRefusal is why a closed approval takes no answer.
func (a *Approval) ClosedRefusal() *Refusal {
	if a.Status == ApprovalCancelled {
		return &Refusal{RefusedDecided, fmt.Sprintf("approval %s was cancelled: its execution ended before it was decided, so it takes no answers", a.ApprovalID)}
	}
	return &Refusal{RefusedDecided, fmt.Sprintf("approval %s is already decided (%s)", a.ApprovalID, strings.ToLower(a.Status))}
}
