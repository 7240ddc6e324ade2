package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Bulk operations are keyed by "organization_id#bulk_operation_id"; a
// client token is claimed by a second item, keyed
// "organization_id#token:<token>", which names the operation it made (ids
// are ULIDs and hold no ':'). Running operations carry running_partition,
// which puts them in the sparse running_bulk index the workers query.

func bulkKey(org, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrBulkKey: avS(org + "#" + id)}
}

func bulkTokenKey(org, token string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrBulkKey: avS(org + "#token:" + token)}
}

func bulkNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "bulk operation %s not found", id)
}

// runningPartition is the one partition of the running_bulk index.
const runningPartition = "running"

func bulkItem(op *cardflow.BulkOperation, revision int64) (map[string]types.AttributeValue, error) {
	rec := *op
	rec.Revision = revision
	body, err := encode("bulk operation", &rec)
	if err != nil {
		return nil, err
	}
	item := bulkKey(op.OrganizationID, op.BulkOperationID)
	item[attrOrg] = avS(op.OrganizationID)
	item[attrBulkID] = avS(op.BulkOperationID)
	item[attrRevision] = avN(revision)
	item[attrRecord] = body
	if op.Status == cardflow.BulkRunning {
		item[attrRunningPartition] = avS(runningPartition)
	}
	return item, nil
}

// CreateBulkOperation writes the operation and its token claim in one
// transaction; a claim that exists leads to the operation it names.
func (s *Store) CreateBulkOperation(ctx context.Context, op *cardflow.BulkOperation) (_ *cardflow.BulkOperation, err error) {
	defer s.translate("CreateBulkOperation", &err)
	if op.OrganizationID == "" || op.BulkOperationID == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "a bulk operation needs an organization and an id")
	}
	item, err := bulkItem(op, 1)
	if err != nil {
		return nil, err
	}
	head, err := s.putOp(TableBulkOperations, item, expression.AttributeNotExists(expression.Name(attrBulkKey)))
	if err != nil {
		return nil, err
	}
	ops := []types.TransactWriteItem{head}
	if op.ClientToken != "" {
		claim := bulkTokenKey(op.OrganizationID, op.ClientToken)
		claim[attrOrg], claim[attrBulkTarget] = avS(op.OrganizationID), avS(op.BulkOperationID)
		c, err := s.putOp(TableBulkOperations, claim, expression.AttributeNotExists(expression.Name(attrBulkKey)))
		if err != nil {
			return nil, err
		}
		ops = append(ops, c)
	}
	err = s.transact(ctx, ops...)
	switch i, _ := failedCondition(err); {
	case err == nil:
		stored := *op
		stored.Revision = 1
		op.Revision = 1
		return &stored, nil
	case i == 1:
		claim, err := s.get(ctx, TableBulkOperations, bulkTokenKey(op.OrganizationID, op.ClientToken))
		if err != nil {
			return nil, err
		}
		return s.GetBulkOperation(ctx, op.OrganizationID, stringAttr(claim, attrBulkTarget))
	case i == 0:
		return nil, cardflow.Errorf(cardflow.ECONFLICT, "bulk operation %s already exists", op.BulkOperationID)
	}
	return nil, err
}

func (s *Store) GetBulkOperation(ctx context.Context, org, id string) (_ *cardflow.BulkOperation, err error) {
	defer s.translate("GetBulkOperation", &err)
	if org == "" || id == "" {
		return nil, bulkNotFound(id)
	}
	item, err := s.get(ctx, TableBulkOperations, bulkKey(org, id))
	if err != nil {
		return nil, err
	}
	if !owned(item, org) {
		return nil, bulkNotFound(id)
	}
	return decode[cardflow.BulkOperation](item)
}

// PutBulkOperation replaces the operation at op.Revision (putRevision).
func (s *Store) PutBulkOperation(ctx context.Context, op *cardflow.BulkOperation) (err error) {
	defer s.translate("PutBulkOperation", &err)
	if op.OrganizationID == "" || op.BulkOperationID == "" {
		return bulkNotFound(op.BulkOperationID)
	}
	item, err := bulkItem(op, op.Revision+1)
	if err != nil {
		return err
	}
	err = s.putRevision(ctx, TableBulkOperations, item, op.OrganizationID, op.Revision, bulkNotFound(op.BulkOperationID),
		cardflow.Errorf(cardflow.ECONFLICT, "bulk operation %s changed meanwhile", op.BulkOperationID))
	if err == nil {
		op.Revision++
	}
	return err
}

// ListRunningBulkOperations queries the sparse running_bulk index.
func (s *Store) ListRunningBulkOperations(ctx context.Context) (_ []cardflow.BulkRef, err error) {
	defer s.translate("ListRunningBulkOperations", &err)
	in, err := s.query(TableBulkOperations, indexRunningBulk, expression.Key(attrRunningPartition).Equal(expression.Value(runningPartition)), nil)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s, in, func(item map[string]types.AttributeValue) (cardflow.BulkRef, error) {
		return cardflow.BulkRef{OrganizationID: stringAttr(item, attrOrg), BulkOperationID: stringAttr(item, attrBulkID)}, nil
	})
}
