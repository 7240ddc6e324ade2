package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// LinkIssuer makes an approver's personal response links to an approval's
// card (pkg/teams does).
type LinkIssuer interface {
	IssueApprovalLinks(ctx context.Context, a *cardflow.Approval, approver string) ([]cardflow.DeliveryLink, error)
}

// IssueLinksInput is the body of issueApprovalLinks.
type IssueLinksInput struct {
	ApprovalID string `json:"approval_id"`
	Approver   string `json:"approver"`
}

// ApprovalLinks are one approver's personal links to an approval's card.
type ApprovalLinks struct {
	ApprovalID string                  `json:"approval_id"`
	Approver   string                  `json:"approver"`
	Links      []cardflow.DeliveryLink `json:"links"`
}

// IssueApprovalLinks gives an admin the personal links of one approver of
// an open approval. A personal link answers as its approver, so no read
// shows one (not the outbox, not the approval, not the execution): this
// explicit act is the only way to one besides the approver's own card, and
// it is recorded in the execution's log, with the admin as its actor,
// before the links are given.
func (s *Approvals) IssueApprovalLinks(ctx context.Context, in IssueLinksInput) (*ApprovalLinks, error) {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(in.ApprovalID) == "":
		return nil, cardflow.Errorf(cardflow.EINVALID, "approval_id is required")
	case strings.TrimSpace(in.Approver) == "":
		return nil, cardflow.Errorf(cardflow.EINVALID, "approver is required: the approver whose links to give")
	}
	a, err := s.store.GetApproval(ctx, p.OrganizationID, in.ApprovalID)
	if err != nil {
		return nil, err
	}
	approver := ""
	for _, x := range a.Approvers {
		if strings.EqualFold(strings.TrimSpace(x), strings.TrimSpace(in.Approver)) {
			approver = x
		}
	}
	// The request is well formed; the approval has no such approver, so
	// there are no links of theirs to give.
	if approver == "" {
		return nil, cardflow.Errorf(cardflow.ENOTFOUND, "%s is not an approver of approval %s (its approvers: %s)", in.Approver, a.ApprovalID, strings.Join(a.Approvers, ", "))
	}
	if !a.Open() {
		return nil, cardflow.Errorf(cardflow.ECONFLICT, "approval %s is %s; its links would record nothing", a.ApprovalID, a.Status)
	}
	// A deployment without response links has no issuer (Approvals).
	if s.issuer == nil {
		return nil, cardflow.Errorf(cardflow.ENOTFOUND, "this deployment issues no personal links: it signs no response links")
	}
	links, err := s.issuer.IssueApprovalLinks(ctx, a, approver)
	if err != nil {
		return nil, err
	}
	ev := cardflow.Event{At: s.millis(), Type: cardflow.EventApprovalLinksIssued, Actor: p.Actor,
		Message: fmt.Sprintf("personal links of %s given to %s", approver, p.Actor)}
	if err := s.recordApprovalEvent(ctx, a, ev); err != nil {
		return nil, err
	}
	return &ApprovalLinks{ApprovalID: a.ApprovalID, Approver: approver, Links: links}, nil
}

// recordApprovalEvent adds an approval's event to its execution's log, or
// fails: unlike audit, what depends on it must not happen unrecorded.
func (s *Approvals) recordApprovalEvent(ctx context.Context, a *cardflow.Approval, ev cardflow.Event) error {
	ev.StepID, ev.Step = a.StepID, a.StepName
	for {
		ex, err := s.store.GetExecution(ctx, a.OrganizationID, a.WorkflowID, a.ExecutionID)
		if err != nil {
			return err
		}
		if ex.Open() && ex.State.Phase == "" {
			// The runner owns the execution while it runs a step.
			return cardflow.Errorf(cardflow.ECONFLICT, "execution %s is running a step; ask again in a moment", ex.WorkflowExecutionID)
		}
		ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events, ev)
		if n := len(ex.WorkflowEventLog.Events); n > maxEvents {
			ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events[:0:0], ex.WorkflowEventLog.Events[n-maxEvents:]...)
		}
		ex.WorkflowEventLog.Total++
		ex.ModifiedOn = max(s.millis(), ex.ModifiedOn+1)
		err = s.store.PutExecution(ctx, ex)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue
		}
		if err != nil {
			return err
		}
		if s.notify != nil {
			s.notify.ExecutionChanged(ex.Ref())
		}
		return nil
	}
}
