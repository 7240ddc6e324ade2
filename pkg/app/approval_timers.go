package app

import (
	"context"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// nudgeApproval has the runner look at an open approval's wait without
// claiming it, so that the step's timers send the card to an approver who
// does not have it (one a reassignment brought in). A runner that holds
// a token for the wait is woken; otherwise the wait is marked, and the
// runner's next park ends at once.
func (s *Runs) nudgeApproval(ctx context.Context, a *cardflow.Approval) error {
	for {
		proc, err := s.store.GetProcess(ctx, a.OrganizationID, a.ProcessID)
		if err != nil {
			return err
		}
		w := proc.Wait
		if proc.ExecutionID != a.ExecutionID || proc.Closed || w == nil || w.Seq != a.Wait || w.Claimed() {
			// Not open yet (its opening sends every card) or over.
			return nil
		}
		if w.Token == "" && !w.Nudged {
			w.Nudged = true
			err = s.store.PutProcess(ctx, proc)
			if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
				continue
			}
			if err != nil {
				return err
			}
		}
		return s.runner.Wake(ctx, cardflow.ExecutionRef{OrganizationID: a.OrganizationID, WorkflowID: a.WorkflowID, ExecutionID: a.ExecutionID}, w)
	}
}
