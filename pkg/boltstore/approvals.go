package boltstore

import (
	"context"
	"strings"

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
	rec.Revision, rec.Overdue = 1, false
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
		rec.Overdue = false
		if err := indexApproval(tx, k, &rec); err != nil {
			return err
		}
		if d, ok := cardflow.ApprovalStatsOf(&rec); ok && stored.Open() {
			if err := addApprovalStats(tx, a.OrganizationID, a.WorkflowID, d); err != nil {
				return err
			}
		}
		return put(b, k, &rec)
	})
	if err == nil {
		a.Revision++
	}
	return err
}

// addApprovalStats adds d to the aggregates of its day, of the
// organization and of the workflow.
func addApprovalStats(tx *bolt.Tx, org, workflowID string, d cardflow.ApprovalDayStats) error {
	b := tx.Bucket(bApprovalStats)
	for _, wf := range []string{"", workflowID} {
		k := under(prefix(org, wf), d.Day)
		day := cardflow.ApprovalDayStats{Day: d.Day}
		if v := b.Get(k); v != nil {
			stored, err := decode[cardflow.ApprovalDayStats](v)
			if err != nil {
				return err
			}
			day = *stored
		}
		day.Merge(d)
		if err := put(b, k, &day); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) ApprovalStats(_ context.Context, org, workflowID string, days []string) ([]cardflow.ApprovalDayStats, error) {
	if len(days) > cardflow.MaxStatsDays {
		return nil, cardflow.Errorf(cardflow.EINVALID, "statistics cover at most %d days, not %d", cardflow.MaxStatsDays, len(days))
	}
	out := []cardflow.ApprovalDayStats{}
	if !validParts(org) || strings.IndexByte(workflowID, 0) >= 0 {
		return out, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bApprovalStats)
		for _, day := range days {
			v := b.Get(under(prefix(org, workflowID), day))
			if v == nil {
				continue
			}
			d, err := decode[cardflow.ApprovalDayStats](v)
			if err != nil {
				return err
			}
			out = append(out, *d)
		}
		return nil
	})
	return out, err
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
