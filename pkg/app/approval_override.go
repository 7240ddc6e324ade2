package app

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// MaxOverrideReason bounds the reason of an override, which the approval
// record, the step's output and the execution's log all carry.
const MaxOverrideReason = 1000

// OverrideApprovalInput is the body of overrideApproval.
type OverrideApprovalInput struct {
	ApprovalID string `json:"approval_id"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
}

// OverrideApproval decides an open approval without its approvers: an
// admin's act, recorded on the approval with the actor and the reason.
// The step leaves by the decision's exit and its output says it was
// overridden; the answers given so far stay as they were.
func (s *Answers) OverrideApproval(ctx context.Context, in OverrideApprovalInput) (*cardflow.Approval, error) {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	// White space as openapi.yaml's pattern means it (see IsSpecSpace), and
	// the length as its maxLength counts it, before trimming.
	reason := cardflow.TrimSpecSpace(in.Reason)
	switch {
	case strings.TrimSpace(in.ApprovalID) == "":
		return nil, cardflow.Errorf(cardflow.EINVALID, "approval_id is required")
	case in.Decision != cardflow.DecisionApprove && in.Decision != cardflow.DecisionReject:
		return nil, cardflow.Errorf(cardflow.EINVALID, "decision must be approve or reject")
	case reason == "":
		return nil, cardflow.Errorf(cardflow.EINVALID, "reason is required: say why the approval is decided without its approvers")
	case utf8.RuneCountInString(in.Reason) > MaxOverrideReason:
		return nil, cardflow.Errorf(cardflow.EINVALID, "reason is longer than %d characters", MaxOverrideReason)
	}
	for {
		a, err := s.store.GetApproval(ctx, p.OrganizationID, in.ApprovalID)
		if err != nil {
			return nil, err
		}
		now := s.millis()
		if a.Open() && a.Deadline > 0 && now >= a.Deadline {
			return nil, cardflow.Errorf(cardflow.ECONFLICT, "approval %s timed out", a.ApprovalID)
		}
		if err := a.OverrideWith(cardflow.ApprovalOverride{Actor: p.Actor, At: now, Decision: in.Decision, Reason: reason}); err != nil {
			return nil, err
		}
		err = s.store.PutApproval(ctx, a)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue // an answer came first: look again
		}
		if err != nil {
			return nil, err
		}
		// The step's event carries the override into the execution's log
		// as it leaves by the decision's exit.
		s.log.InfoContext(ctx, "approval overridden", "approval", a.ApprovalID, "actor", p.Actor, "decision", in.Decision)
		if err := s.claimApproval(ctx, a, p.Actor); err != nil {
			return nil, err
		}
		return a, nil
	}
}

// refused counts a refusal on the approval record, and adds only an
// actor's first refusal for a reason to the execution's log, so that
// repeated refusals neither rewrite the execution nor push the answers out
// of its capped log. A refusal of an approval that takes no answers any
// more (decided, timed out) writes nothing: a late or replayed click
// changes no record.
func (s *Answers) refused(ctx context.Context, a *cardflow.Approval, actor, channel string, r *cardflow.Refusal) {
	now := s.millis()
	// Each conflict is another writer's success, so a burst of refusals
	// gets through; the bound only stops a store that keeps failing.
	for range 50 {
		if !a.Open() || r.Reason == cardflow.RefusedDecided {
			s.log.InfoContext(ctx, "answer to a closed approval refused", "approval", a.ApprovalID, "actor", actor, "channel", channel)
			return
		}
		first := a.CountRefusal(actor, r.Reason, now)
		err := s.store.PutApproval(ctx, a)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			if a, err = s.store.GetApproval(ctx, a.OrganizationID, a.ApprovalID); err == nil {
				continue
			}
		}
		if err != nil {
			s.log.WarnContext(ctx, "refusal not counted on the approval", "approval", a.ApprovalID, "actor", actor, "error", err)
			return
		}
		if first {
			s.audit(ctx, a, cardflow.Event{At: now, Type: cardflow.EventApprovalRefused, Actor: actor,
				Message: fmt.Sprintf("%s (%s): %s; further refusals of %s for this reason are counted on the approval", r.Reason, channel, r.Message, actor)})
		}
		return
	}
}
