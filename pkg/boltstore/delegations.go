package boltstore

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// bDelegations holds each organization's delegations as one record.
var bDelegations = []byte("delegations") // org -> Delegations

func (s *Store) GetDelegations(_ context.Context, org string) (*cardflow.Delegations, error) {
	var out *cardflow.Delegations
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = getDelegations(tx, org)
		return err
	})
	return out, err
}

func getDelegations(tx *bolt.Tx, org string) (*cardflow.Delegations, error) {
	none := &cardflow.Delegations{OrganizationID: org, Items: []cardflow.Delegation{}}
	if !validParts(org) {
		return none, nil
	}
	v := tx.Bucket(bDelegations).Get([]byte(org))
	if v == nil {
		return none, nil
	}
	return decode[cardflow.Delegations](v)
}

func (s *Store) PutDelegations(_ context.Context, d *cardflow.Delegations) error {
	if !validParts(d.OrganizationID) {
		return cardflow.Errorf(cardflow.EINVALID, "delegations need an organization")
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		cur, err := getDelegations(tx, d.OrganizationID)
		if err != nil {
			return err
		}
		if cur.Revision != d.Revision {
			return cardflow.Errorf(cardflow.ECONFLICT, "the delegations of %s changed meanwhile", d.OrganizationID)
		}
		next := *d
		next.Revision++
		if err := put(tx.Bucket(bDelegations), []byte(d.OrganizationID), &next); err != nil {
			return err
		}
		d.Revision = next.Revision
		return nil
	})
}
