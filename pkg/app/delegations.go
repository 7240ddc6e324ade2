package app

import (
	"context"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// maxMovedApprovals bounds the pending approvals one setDelegation moves,
// so that the request stays short; a person with more calls again.
const maxMovedApprovals = 200

// SetDelegationInput is the body of setDelegation.
type SetDelegationInput struct {
	// Approver is whose approvals are handed on: the key's person when "",
	// anyone of the organization for an admin key.
	Approver string `json:"approver"`
	Delegate string `json:"delegate"`
	StartsOn int64  `json:"starts_on"`
	EndsOn   int64  `json:"ends_on"`
	// MovePending moves the approver's pending approvals to the delegate
	// too; only a delegation that holds now may.
	MovePending bool `json:"move_pending"`
}

// SetDelegationOutput is what setDelegation answers.
type SetDelegationOutput struct {
	Delegation *cardflow.Delegation `json:"delegation"`
	// Moved are the pending approvals handed to the delegate; NotMoved
	// those that could not be, and why.
	Moved    []string         `json:"moved"`
	NotMoved []NotMovedReason `json:"not_moved"`
}

// NotMovedReason is a pending approval move_pending left with the
// approver.
type NotMovedReason struct {
	ApprovalID string `json:"approval_id"`
	Reason     string `json:"reason"`
}

// delegator returns whose delegations the caller manages: the key's
// person, or, for an admin key, the approver it names.
func delegator(p *cardflow.Principal, approver string) (string, error) {
	approver = strings.TrimSpace(approver)
	switch {
	case approver == "" && p.Person == "":
		return "", cardflow.Errorf(cardflow.EINVALID, "this API key acts for no person: name the approver (an admin key may), or use a key created with --actor <person>")
	case approver == "":
		return p.Person, nil
	case p.Has(cardflow.ScopeAdmin) || strings.EqualFold(approver, p.Person):
		return approver, nil
	}
	return "", cardflow.Errorf(cardflow.EFORBIDDEN, "only an admin key manages another person's delegations")
}

// SetDelegation hands the approver's new approvals to a delegate for a
// period, and, with MovePending, those pending now as well.
func (s *Answers) SetDelegation(ctx context.Context, in SetDelegationInput) (*SetDelegationOutput, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	approver, err := delegator(p, in.Approver)
	if err != nil {
		return nil, err
	}
	now := s.millis()
	d := cardflow.Delegation{
		DelegationID: cardflow.NewID(s.now()), Approver: approver, Delegate: strings.TrimSpace(in.Delegate),
		StartsOn: in.StartsOn, EndsOn: in.EndsOn, CreatedBy: p.Actor, CreatedOn: now,
	}
	if in.MovePending && !(d.StartsOn <= now && now < d.EndsOn) {
		return nil, cardflow.Errorf(cardflow.EINVALID, "move_pending moves pending approvals now, so the period must hold now (starts_on at most now, ends_on later)")
	}
	for {
		ds, err := s.store.GetDelegations(ctx, p.OrganizationID)
		if err != nil {
			return nil, err
		}
		if err := ds.Add(d, now); err != nil {
			return nil, err
		}
		err = s.store.PutDelegations(ctx, ds)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	out := &SetDelegationOutput{Delegation: &d, Moved: []string{}, NotMoved: []NotMovedReason{}}
	if in.MovePending {
		s.movePending(ctx, p, &d, out)
	}
	return out, nil
}

// movePending hands the approver's part of their pending approvals to the
// delegate through the reassignment the approvals record; an approval the
// approver answered already, or that lists the delegate already, stays.
func (s *Answers) movePending(ctx context.Context, p *cardflow.Principal, d *cardflow.Delegation, out *SetDelegationOutput) {
	f := cardflow.ApprovalFilter{Approver: d.Approver}
	var opt cardflow.ListOptions[cardflow.ApprovalKey]
	var ids []string
	for len(ids) < maxMovedApprovals {
		page, err := s.store.ListPendingApprovals(ctx, p.OrganizationID, f, opt)
		if err != nil {
			out.NotMoved = append(out.NotMoved, NotMovedReason{Reason: "the pending approvals could not be listed: " + cardflow.ErrorMessage(err)})
			break
		}
		for _, a := range page.Items {
			ids = append(ids, a.ApprovalID)
		}
		if page.LastKey == nil {
			break
		}
		opt.After = page.LastKey
	}
	for i, id := range ids {
		if i == maxMovedApprovals {
			out.NotMoved = append(out.NotMoved, NotMovedReason{ApprovalID: id, Reason: "more pending approvals than one request moves; set the delegation's move again"})
			break
		}
		_, err := s.reassign(ctx, p.OrganizationID, id, d.Approver, d.Delegate, p.Actor,
			&cardflow.StandIn{Delegate: d.Delegate, For: d.Approver, DelegationID: d.DelegationID})
		if err != nil {
			out.NotMoved = append(out.NotMoved, NotMovedReason{ApprovalID: id, Reason: cardflow.ErrorMessage(err)})
			continue
		}
		out.Moved = append(out.Moved, id)
	}
}

// GetDelegationsInput selects getDelegations' list.
type GetDelegationsInput struct {
	// Approver narrows an admin's list to one person's delegations.
	Approver string
}

// GetDelegations lists delegations: an admin key's, of the organization
// (or one approver's); anyone else's, those they give or receive.
func (s *Approvals) GetDelegations(ctx context.Context, in GetDelegationsInput) ([]cardflow.Delegation, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	ds, err := s.store.GetDelegations(ctx, p.OrganizationID)
	if err != nil {
		return nil, err
	}
	approver := strings.TrimSpace(in.Approver)
	if p.Has(cardflow.ScopeAdmin) {
		return ds.Of(approver), nil
	}
	if p.Person == "" {
		return nil, cardflow.Errorf(cardflow.EFORBIDDEN, "this API key acts for no person, so it has no delegations; an admin key lists the organization's")
	}
	if approver != "" && !strings.EqualFold(approver, p.Person) {
		return nil, cardflow.Errorf(cardflow.EFORBIDDEN, "only an admin key lists another person's delegations")
	}
	out := []cardflow.Delegation{}
	for _, d := range ds.Items {
		if strings.EqualFold(d.Approver, p.Person) || strings.EqualFold(d.Delegate, p.Person) {
			out = append(out, d)
		}
	}
	return out, nil
}

// RemoveDelegationInput is the body of removeDelegation.
type RemoveDelegationInput struct {
	DelegationID string `json:"delegation_id"`
}

// RemoveDelegation removes a delegation: the approver's own, or any of
// the organization's for an admin key. Approvals it already handed on stay
// with the delegate.
func (s *Approvals) RemoveDelegation(ctx context.Context, in RemoveDelegationInput) (*cardflow.Delegation, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	id := strings.TrimSpace(in.DelegationID)
	if id == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "delegation_id is required")
	}
	for {
		ds, err := s.store.GetDelegations(ctx, p.OrganizationID)
		if err != nil {
			return nil, err
		}
		d, err := ds.Get(id)
		if err != nil {
			return nil, err
		}
		if !p.Has(cardflow.ScopeAdmin) && (p.Person == "" || !strings.EqualFold(d.Approver, p.Person)) {
			// Someone else's delegation is not theirs to see either.
			return nil, cardflow.DelegationNotFound(id)
		}
		removed, _ := ds.Remove(id)
		err = s.store.PutDelegations(ctx, ds)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue
		}
		if err != nil {
			return nil, err
		}
		return removed, nil
	}
}
