package boltstore

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Bulk operations, their client tokens, and the index of running ones.
var (
	bBulkOperations = []byte("bulk_operations") // org 0 bulk_operation_id -> BulkOperation
	bBulkTokens     = []byte("bulk_tokens")     // org 0 client_token -> bulk_operation_id
	bRunningBulk    = []byte("running_bulk")    // org 0 bulk_operation_id -> "", RUNNING only
)

func bulkNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "bulk operation %s not found", id)
}

// putBulk writes op and keeps the index of running operations.
func putBulk(tx *bolt.Tx, op *cardflow.BulkOperation) error {
	k := under(prefix(op.OrganizationID), op.BulkOperationID)
	var err error
	if op.Status == cardflow.BulkRunning {
		err = tx.Bucket(bRunningBulk).Put(k, nil)
	} else {
		err = tx.Bucket(bRunningBulk).Delete(k)
	}
	if err != nil {
		return err
	}
	return put(tx.Bucket(bBulkOperations), k, op)
}

func (s *Store) CreateBulkOperation(_ context.Context, op *cardflow.BulkOperation) (*cardflow.BulkOperation, error) {
	if !validParts(op.OrganizationID, op.BulkOperationID) || op.ClientToken != "" && !validParts(op.ClientToken) {
		return nil, cardflow.Errorf(cardflow.EINVALID, "a bulk operation needs an organization and an id")
	}
	var out *cardflow.BulkOperation
	err := s.db.Update(func(tx *bolt.Tx) error {
		if op.ClientToken != "" {
			tk := under(prefix(op.OrganizationID), op.ClientToken)
			if id := tx.Bucket(bBulkTokens).Get(tk); id != nil {
				v := tx.Bucket(bBulkOperations).Get(under(prefix(op.OrganizationID), string(id)))
				if v == nil {
					return bulkNotFound(string(id))
				}
				var err error
				out, err = decode[cardflow.BulkOperation](v)
				return err
			}
			if err := tx.Bucket(bBulkTokens).Put(tk, []byte(op.BulkOperationID)); err != nil {
				return err
			}
		}
		if tx.Bucket(bBulkOperations).Get(under(prefix(op.OrganizationID), op.BulkOperationID)) != nil {
			return cardflow.Errorf(cardflow.ECONFLICT, "bulk operation %s already exists", op.BulkOperationID)
		}
		stored := *op
		stored.Revision = 1
		if err := putBulk(tx, &stored); err != nil {
			return err
		}
		out = &stored
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out.BulkOperationID == op.BulkOperationID {
		op.Revision = out.Revision
	}
	return out, nil
}

func (s *Store) GetBulkOperation(_ context.Context, org, id string) (*cardflow.BulkOperation, error) {
	var k []byte
	if validParts(org, id) {
		k = under(prefix(org), id)
	}
	return getJSON[cardflow.BulkOperation](s.db, bBulkOperations, k, func() error { return bulkNotFound(id) })
}

func (s *Store) PutBulkOperation(_ context.Context, op *cardflow.BulkOperation) error {
	if !validParts(op.OrganizationID, op.BulkOperationID) {
		return bulkNotFound(op.BulkOperationID)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		v := tx.Bucket(bBulkOperations).Get(under(prefix(op.OrganizationID), op.BulkOperationID))
		if v == nil {
			return bulkNotFound(op.BulkOperationID)
		}
		old, err := decode[cardflow.BulkOperation](v)
		if err != nil {
			return err
		}
		if old.Revision != op.Revision {
			return cardflow.Errorf(cardflow.ECONFLICT, "bulk operation %s changed meanwhile", op.BulkOperationID)
		}
		next := *op
		next.Revision++
		return putBulk(tx, &next)
	})
	if err == nil {
		op.Revision++
	}
	return err
}

func (s *Store) ListRunningBulkOperations(context.Context) ([]cardflow.BulkRef, error) {
	refs := []cardflow.BulkRef{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bRunningBulk).ForEach(func(k, _ []byte) error {
			parts := splitKey(k)
			refs = append(refs, cardflow.BulkRef{OrganizationID: parts[0], BulkOperationID: parts[1]})
			return nil
		})
	})
	return refs, err
}
