package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// openApprovalLink shows the page of an approver's personal link: the card
// and the confirmation form while the approval waits for their answer,
// else what stands. Like every link page it changes nothing.
func (s *Links) openApprovalLink(ctx context.Context, a *cardflow.CardAnswer, token string, page *LinkPage) (*LinkPage, error) {
	ap, err := s.store.GetApproval(ctx, a.OrganizationID, cardflow.ApprovalIDOf(a.ExecutionID, a.Wait))
	if err != nil {
		return nil, err
	}
	page.StepName, page.Approval = ap.StepName, ap
	if s.settledLink(ap, a.Identities, page) {
		return page, nil
	}
	if ex, err := s.store.GetExecution(ctx, ap.OrganizationID, ap.WorkflowID, ap.ExecutionID); err == nil {
		page.Question = s.cardText(ctx, ex, ap.StepID)
	}
	page.Confirmation, err = s.links.ConfirmResponseLink(ctx, token)
	return page, err
}

// settledLink fills the page of a personal link whose approval no longer
// waits for its approver (decided, timed out, or answered by them) with
// what stands, and reports whether it did.
func (s *Links) settledLink(ap *cardflow.Approval, ids []string, page *LinkPage) bool {
	if !ap.Open() {
		return true
	}
	if ap.Deadline > 0 && s.millis() >= ap.Deadline {
		page.TimedOut = true
		return true
	}
	for _, ans := range ap.Answers {
		if containsFold(ids, ans.Approver) {
			page.Note = fmt.Sprintf("You answered (%s) on %s; the approval waits for the other approvers.", ans.Decision, when(ans.At))
			return true
		}
	}
	return false
}

// answerApprovalLink answers an approval as the approver a personal link
// names, by the same rules as any other answer. A refusal (not an
// approver, self-approval, not their turn) is a page saying why, and an
// event in the audit trail. A replay of a link whose answer is recorded,
// or a late click once the approval is decided or timed out, writes
// nothing: the page shows what stands, as opening the link does.
func (s *Links) answerApprovalLink(ctx context.Context, a *cardflow.CardAnswer, page *LinkPage) (*LinkPage, error) {
	decision, _ := a.Payload["decision"].(string)
	if decision == "" {
		decision, _ = a.Payload["verb"].(string)
	}
	id := cardflow.ApprovalIDOf(a.ExecutionID, a.Wait)
	ap, err := s.store.GetApproval(ctx, a.OrganizationID, id)
	if err != nil {
		return nil, err
	}
	if ap.Status == cardflow.ApprovalCancelled {
		// No decision to show: the answer is refused (409), writing
		// nothing.
		return nil, ap.ClosedRefusal().Error()
	}
	if s.settledLink(ap, a.Identities, page) {
		page.StepName, page.Approval = ap.StepName, ap
		return page, nil
	}
	res, err := s.answerApproval(ctx, a.OrganizationID, ApprovalAnswer{
		ApprovalID: id, IDs: a.Identities, Actor: a.Actor, Channel: cardflow.ChannelLink, Decision: decision,
	})
	switch code := cardflow.ErrorCode(err); {
	case err == nil:
		ap := res.Approval
		d, _ := cardflow.ParseDecision(decision)
		page.StepName, page.Approval, page.Recorded = ap.StepName, ap, true
		page.Note = fmt.Sprintf("Your answer (%s) is recorded; the approval waits for the other approvers.", d)
		if res.Decided {
			page.Note = fmt.Sprintf("Your answer (%s) is recorded; the approval is %s.", d, strings.ToLower(ap.Status))
		}
		return page, nil
	case code == cardflow.EFORBIDDEN || code == cardflow.ECONFLICT || code == cardflow.EINVALID:
		ap, gerr := s.store.GetApproval(ctx, a.OrganizationID, id)
		if gerr != nil {
			return nil, gerr
		}
		page.StepName = ap.StepName
		if ap.Status == cardflow.ApprovalCancelled {
			return nil, err // no decision to see: the answer is refused
		}
		if !ap.Open() {
			page.Approval = ap // decided: the late click sees the decision
			return page, nil
		}
		page.Closed = "Your answer was not recorded: " + cardflow.ErrorMessage(err) + "."
		return page, nil
	}
	return nil, err
}

// deliverNext sends a sequential approval's card to the approver whose turn
// it now is. Without a deliverer (the answer functions on AWS read no
// organization's secrets) the runner is nudged instead, and the step sends
// the card to whoever should hold it and does not. The answer is stored
// already, so a failure is logged, not returned: the approver can still
// answer through the API.
func (s *Runs) deliverNext(ctx context.Context, ap *cardflow.Approval) {
	if ap.Policy != cardflow.PolicySequential || !ap.Open() {
		return
	}
	if s.deliver == nil {
		if err := s.nudgeApproval(ctx, ap); err != nil {
			s.log.WarnContext(ctx, "the runner was not nudged to send the next approver's card", "approval", ap.ApprovalID, "error", err)
		}
		return
	}
	for _, p := range ap.Recipients() {
		if err := cardflow.DeliverApproval(ctx, s.store, s.deliver, ap, p, "", s.now()); err != nil {
			s.log.WarnContext(ctx, "the next approver's card was not delivered", "approval", ap.ApprovalID, "approver", p, "error", err)
		}
	}
}

func containsFold(ids []string, id string) bool {
	for _, x := range ids {
		if strings.EqualFold(strings.TrimSpace(x), strings.TrimSpace(id)) {
			return true
		}
	}
	return false
}

// when formats an epoch-ms time for a page.
func when(ms int64) string { return time.UnixMilli(ms).UTC().Format("2 Jan 2006 15:04 MST") }

// refusalNote says why a card's answer did not count. A late click on a
// finished approval gets how it ended, as its updated card says.
func (s *Answers) refusalNote(ctx context.Context, org, approvalID string, err error) string {
	if ap, gerr := s.store.GetApproval(ctx, org, approvalID); gerr == nil && !ap.Open() {
		return ap.EndNote()
	}
	return "Your answer was not recorded: " + cardflow.ErrorMessage(err) + "."
}

// cancelApproval closes the approval ex, which has ended, left open in
// wait (cardflow.CancelApproval). The end is stored already, so a failure
// is logged, not returned: an answer to the approval closes it then.
func (s *Runs) cancelApproval(ctx context.Context, ex *cardflow.Execution, wait int) {
	updater, _ := s.deliver.(cardflow.ApprovalCardUpdater)
	if err := cardflow.CancelApproval(ctx, s.store, updater, ex, wait, s.now()); err != nil {
		s.log.WarnContext(ctx, "the open approval of an ended execution was not closed", "execution", ex.WorkflowExecutionID, "error", cardflow.ErrorMessage(err))
	}
}

// closeEnded closes a, open, when its execution has ended and whoever
// ended it did not get to close it, and reports whether it did.
func (s *Runs) closeEnded(ctx context.Context, a *cardflow.Approval) bool {
	if !a.Open() {
		return false
	}
	ex, err := s.store.GetExecution(ctx, a.OrganizationID, a.WorkflowID, a.ExecutionID)
	if err != nil || ex.Open() {
		return false
	}
	updater, _ := s.deliver.(cardflow.ApprovalCardUpdater)
	return cardflow.CancelApproval(ctx, s.store, updater, ex, a.Wait, s.now()) == nil
}
