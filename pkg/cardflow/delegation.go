package cardflow

import (
	"context"
	"strings"
)

// MaxDelegations bounds the delegations an organization keeps, ended ones
// aside (adding one drops those): all of them are one record, read
// whenever an approval opens.
const MaxDelegations = 200

// Delegation hands an approver's new approvals to a delegate for a period
// (docs/DECISIONS.md, Approvals: "Delegation").
type Delegation struct {
	DelegationID string `json:"delegation_id"`
	Approver     string `json:"approver"`
	Delegate     string `json:"delegate"`
	// StartsOn and EndsOn are the period (epoch ms): from StartsOn
	// included to EndsOn excluded.
	StartsOn  int64  `json:"starts_on"`
	EndsOn    int64  `json:"ends_on"`
	CreatedBy string `json:"created_by"`
	CreatedOn int64  `json:"created_on"`
}

// Active reports whether the delegation holds at now (epoch ms).
func (d *Delegation) Active(now int64) bool { return d.StartsOn <= now && now < d.EndsOn }

// Delegations are all the delegations of one organization, stored as one
// record so that opening an approval reads them in one read, and adding
// one checks the bound and the overlaps atomically.
type Delegations struct {
	OrganizationID string       `json:"organization_id"`
	Items          []Delegation `json:"delegations"`
	// Revision is the stored revision; 0 for an organization with none
	// stored yet.
	Revision int64 `json:"revision"`
}

// Add validates d and adds it, dropping the delegations ended at now.
// Periods of one approver may not overlap, and a delegate is the person
// approvals go to: one hop, so a delegate's own delegation never forwards
// them further.
func (s *Delegations) Add(d Delegation, now int64) error {
	d.Approver, d.Delegate = strings.TrimSpace(d.Approver), strings.TrimSpace(d.Delegate)
	switch {
	case !IsPerson(d.Approver):
		return Errorf(EINVALID, "approver must name a person: an Entra ID object id, UPN or e-mail address")
	case !IsPerson(d.Delegate):
		return Errorf(EINVALID, "delegate must name a person: an Entra ID object id, UPN or e-mail address")
	case sameID(d.Approver, d.Delegate):
		return Errorf(EINVALID, "delegate is the approver: a person cannot delegate to themselves")
	case d.StartsOn <= 0 || d.EndsOn <= 0:
		return Errorf(EINVALID, "starts_on and ends_on are required (epoch milliseconds)")
	case d.EndsOn <= d.StartsOn:
		return Errorf(EINVALID, "ends_on must be after starts_on")
	case d.EndsOn <= now:
		return Errorf(EINVALID, "ends_on is in the past: the delegation would never hold")
	}
	kept := s.Items[:0:0]
	for _, x := range s.Items {
		if x.EndsOn > now {
			kept = append(kept, x)
		}
	}
	for _, x := range kept {
		if sameID(x.Approver, d.Approver) && x.StartsOn < d.EndsOn && d.StartsOn < x.EndsOn {
			return Errorf(ECONFLICT, "%s already delegates to %s from %d to %d, which overlaps this period; remove that delegation first (delegation_id %s)",
				x.Approver, x.Delegate, x.StartsOn, x.EndsOn, x.DelegationID)
		}
	}
	if len(kept) >= MaxDelegations {
		return Errorf(ECONFLICT, "the organization has %d delegations, the most it keeps; remove some first", MaxDelegations)
	}
	s.Items = append(kept, d)
	return nil
}

// Remove removes the delegation of that id and returns it; ENOTFOUND when
// there is none.
func (s *Delegations) Remove(id string) (*Delegation, error) {
	for i, x := range s.Items {
		if x.DelegationID == id {
			s.Items = append(s.Items[:i:i], s.Items[i+1:]...)
			return &x, nil
		}
	}
	return nil, DelegationNotFound(id)
}

// Get returns the delegation of that id; ENOTFOUND when there is none.
func (s *Delegations) Get(id string) (*Delegation, error) {
	for i := range s.Items {
		if s.Items[i].DelegationID == id {
			return &s.Items[i], nil
		}
	}
	return nil, DelegationNotFound(id)
}

// Of lists approver's delegations, or all when approver is "".
func (s *Delegations) Of(approver string) []Delegation {
	out := []Delegation{}
	for _, x := range s.Items {
		if approver == "" || sameID(x.Approver, approver) {
			out = append(out, x)
		}
	}
	return out
}

// ActiveFor returns approver's delegation that holds at now, nil when
// none does.
func (s *Delegations) ActiveFor(approver string, now int64) *Delegation {
	for i := range s.Items {
		if x := &s.Items[i]; x.Active(now) && sameID(x.Approver, approver) {
			return x
		}
	}
	return nil
}

// DelegationNotFound is the error of a delegation the organization does
// not have.
func DelegationNotFound(id string) error {
	return Errorf(ENOTFOUND, "delegation %q not found", id)
}

// DelegationStore keeps each organization's delegations as one record.
// Adapters of Store implement it; the contract suite covers it.
type DelegationStore interface {
	// GetDelegations returns org's delegations: none, at revision 0, when
	// it has none stored.
	GetDelegations(ctx context.Context, org string) (*Delegations, error)
	// PutDelegations replaces org's delegations if the stored revision
	// equals d.Revision (0: none stored), and increments d.Revision;
	// ECONFLICT otherwise.
	PutDelegations(ctx context.Context, d *Delegations) error
}

// StandIn is a delegate listed among an approval's approvers in place of
// the approver they stand in for.
type StandIn struct {
	Delegate     string `json:"delegate"`
	For          string `json:"for"`
	DelegationID string `json:"delegation_id"`
}

// Delegate puts, in place of each listed approver with a delegation active
// at now, their delegate, and records it in StandIns. A delegate already
// listed takes no second place: that approver stays listed. It reports
// whether anything changed.
func (a *Approval) Delegate(ds *Delegations, now int64) bool {
	changed := false
	for i, p := range a.Approvers {
		d := ds.ActiveFor(p, now)
		if d == nil || containsID(a.Approvers, d.Delegate) || a.answered(p) {
			continue
		}
		a.Approvers[i] = d.Delegate
		a.StandIns = append(a.StandIns, StandIn{Delegate: d.Delegate, For: p, DelegationID: d.DelegationID})
		changed = true
	}
	return changed
}

// standsInFor returns whom approver stands in for, "" when nobody.
func (a *Approval) standsInFor(approver string) string {
	for _, s := range a.StandIns {
		if sameID(s.Delegate, approver) {
			return s.For
		}
	}
	return ""
}
