package boltstore

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func approvalNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "approval %s not found", id)
}

func (s *Store) CreateApproval(_ context.Context, a *cardflow.Approval) error {
	if !validParts(a.OrganizationID, a.ApprovalID) {
		return cardflow.Errorf(cardflow.EINVALID, "an approval needs an organization and an id")
	}
	rec := *a
	rec.Revision = 1
	err := s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bApprovals)
		k := under(prefix(a.OrganizationID), a.ApprovalID)
		if b.Get(k) != nil {
			return cardflow.Errorf(cardflow.ECONFLICT, "approval %s exists already", a.ApprovalID)
		}
		if err := indexApproval(tx, k, &rec); err != nil {
			return err
		}
		return put(b, k, &rec)
	})
	if err == nil {
		a.Revision = 1
	}
	return err
}

func (s *Store) GetApproval(_ context.Context, org, approvalID string) (*cardflow.Approval, error) {
	var k []byte
	if validParts(org, approvalID) {
		k = under(prefix(org), approvalID)
	}
	return getJSON[cardflow.Approval](s.db, bApprovals, k, func() error { return approvalNotFound(approvalID) })
}

func (s *Store) PutApproval(_ context.Context, a *cardflow.Approval) error {
	if !validParts(a.OrganizationID, a.ApprovalID) {
		return approvalNotFound(a.ApprovalID)
	}
	err := s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bApprovals)
		k := under(prefix(a.OrganizationID), a.ApprovalID)
		v := b.Get(k)
		if v == nil {
			return approvalNotFound(a.ApprovalID)
		}
		stored, err := decode[cardflow.Approval](v)
		if err != nil {
			return err
		}
		if stored.Revision != a.Revision {
			return cardflow.Errorf(cardflow.ECONFLICT, "approval %s changed meanwhile", a.ApprovalID)
		}
		rec := *a
		rec.Revision++
		if err := indexApproval(tx, k, &rec); err != nil {
			return err
		}
		return put(b, k, &rec)
	})
	if err == nil {
		a.Revision++
	}
	return err
}

// indexApproval keeps an approval in the pending index while it is open.
func indexApproval(tx *bolt.Tx, k []byte, a *cardflow.Approval) error {
	b := tx.Bucket(bPendingApprovals)
	if a.Open() {
		return b.Put(k, []byte{})
	}
	return b.Delete(k)
}

// ListPendingApprovals walks the organization's pending index backwards
// and reads the approvals that pass the filter.
func (s *Store) ListPendingApprovals(_ context.Context, org string, f cardflow.ApprovalFilter, opt cardflow.ListOptions[cardflow.ApprovalKey]) (cardflow.Page[*cardflow.Approval, cardflow.ApprovalKey], error) {
	limit := cardflow.PageSize(opt.Limit)
	page := cardflow.Page[*cardflow.Approval, cardflow.ApprovalKey]{Items: make([]*cardflow.Approval, 0, limit)}
	if !validParts(org) {
		return page, nil
	}
	p := prefix(org)
	var from []byte
	if opt.After != nil {
		// The key's organization is the caller's: the list is.
		if !validParts(opt.After.ApprovalID) {
			return page, nil
		}
		from = under(p, opt.After.ApprovalID)
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		approvals := tx.Bucket(bApprovals)
		var err error
		walkBack(tx.Bucket(bPendingApprovals), p, from, func(k, _ []byte) bool {
			v := approvals.Get(k)
			if v == nil {
				return true
			}
			var a *cardflow.Approval
			if a, err = decode[cardflow.Approval](v); err != nil {
				return false
			}
			if !f.Matches(a) {
				return true
			}
			if len(page.Items) == limit {
				last := page.Items[limit-1]
				page.LastKey = &cardflow.ApprovalKey{OrganizationID: org, ApprovalID: last.ApprovalID}
				return false
			}
			page.Items = append(page.Items, a)
			return true
		})
		return err
	})
	return page, err
}
