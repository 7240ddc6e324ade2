package boltstore

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// bLimits holds the organizations' overrides of the default limits.
var bLimits = []byte("limits") // org -> Limits

func limitsNotFound(org string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "organization %s has no limits of its own", org)
}

func (s *Store) GetLimits(_ context.Context, org string) (*cardflow.Limits, error) {
	var k []byte
	if validParts(org) {
		k = []byte(org)
	}
	return getJSON[cardflow.Limits](s.db, bLimits, k, func() error { return limitsNotFound(org) })
}

func (s *Store) PutLimits(_ context.Context, l *cardflow.Limits) error {
	if !validParts(l.OrganizationID) {
		return cardflow.Errorf(cardflow.EINVALID, "limits need an organization")
	}
	return s.db.Update(func(tx *bolt.Tx) error { return put(tx.Bucket(bLimits), []byte(l.OrganizationID), l) })
}

func (s *Store) DeleteLimits(_ context.Context, org string) error {
	if !validParts(org) {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bLimits).Delete([]byte(org)) })
}

// checkOpenLimit refuses a new execution of org when max of its executions
// are open already. It runs in the write transaction that creates the
// execution, and bbolt runs one at a time, so concurrent starts cannot
// both take the last place. The open index is the count: it walks at most
// max keys.
func checkOpenLimit(tx *bolt.Tx, org string, max int) error {
	if max <= 0 {
		return nil
	}
	p := prefix(org)
	n := 0
	c := tx.Bucket(bOpenExecutions).Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		if n++; n >= max {
			return cardflow.TooManyOpen(org, max)
		}
	}
	return nil
}
