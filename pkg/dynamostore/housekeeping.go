package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// expiryGroup is the one partition of the by_expiry index.
const expiryGroup = "all"

// queryDue reads up to limit items of a sparse index whose sort key is at
// or before until, oldest first.
func (s *Store) queryDue(ctx context.Context, table, index, partition, value, sort string, until int64, limit int) ([]map[string]types.AttributeValue, error) {
	out := []map[string]types.AttributeValue{}
	if limit < 1 {
		return out, nil
	}
	in, err := s.query(table, index, expression.Key(partition).Equal(expression.Value(value)).
		And(expression.Key(sort).LessThanEqual(expression.Value(until))), nil)
	if err != nil {
		return nil, err
	}
	in.ScanIndexForward = aws.Bool(true)
	for {
		in.Limit = aws.Int32(int32(limit - len(out)))
		page, err := s.client.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if len(out) >= limit || page.LastEvaluatedKey == nil {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

func (s *Store) dueProcesses(ctx context.Context, kind string, until int64, limit int) ([]*cardflow.Process, error) {
	items, err := s.queryDue(ctx, TableProcesses, indexByDue, attrDueKind, kind, attrDueAt, until, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*cardflow.Process, 0, len(items))
	for _, item := range items {
		p, err := decode[cardflow.Process](item)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// ListOverdueWaits queries the by_due index, which trails the table by a
// moment: a wait claimed just now may still be listed, and the caller's
// conditional write on the record's revision finds out.
func (s *Store) ListOverdueWaits(ctx context.Context, now int64, limit int) (_ []*cardflow.Process, err error) {
	defer s.translate("ListOverdueWaits", &err)
	return s.dueProcesses(ctx, cardflow.DueWait, now, limit)
}

func (s *Store) ListStaleEarlyResumes(ctx context.Context, before int64, limit int) (_ []*cardflow.Process, err error) {
	defer s.translate("ListStaleEarlyResumes", &err)
	return s.dueProcesses(ctx, cardflow.DueEarly, before, limit)
}

// DeleteExpiredProcesses deletes each record on the condition that it is
// still closed and expired: a new execution may have taken the process id
// over since the index was read.
func (s *Store) DeleteExpiredProcesses(ctx context.Context, now int64, limit int) (_ int, err error) {
	defer s.translate("DeleteExpiredProcesses", &err)
	items, err := s.queryDue(ctx, TableProcesses, indexByDue, attrDueKind, cardflow.DueClosed, attrDueAt, now, limit)
	if err != nil {
		return 0, err
	}
	cond := expression.Name(attrClosed).Equal(expression.Value(true)).
		And(expression.Name(attrExpiresAt).LessThanEqual(expression.Value(now / 1000)))
	return s.deleteEach(ctx, TableProcesses, attrProcessKey, items, cond)
}

// DeleteExpiredIdempotency deletes what TTL would delete within days.
func (s *Store) DeleteExpiredIdempotency(ctx context.Context, now int64, limit int) (_ int, err error) {
	defer s.translate("DeleteExpiredIdempotency", &err)
	items, err := s.queryDue(ctx, TableIdempotency, indexByExpiry, attrExpiryGroup, expiryGroup, attrExpiresAt, now/1000, limit)
	if err != nil {
		return 0, err
	}
	cond := expression.Name(attrExpiresAt).LessThanEqual(expression.Value(now / 1000))
	return s.deleteEach(ctx, TableIdempotency, attrIdempotencyKey, items, cond)
}

// deleteEach deletes the items (keyed by key) for which cond still holds,
// and counts them.
func (s *Store) deleteEach(ctx context.Context, table, key string, items []map[string]types.AttributeValue, cond expression.ConditionBuilder) (int, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, item := range items {
		_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: s.table(table), Key: map[string]types.AttributeValue{key: item[key]},
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		})
		switch {
		case conditionFailed(err):
		case err != nil:
			return n, err
		default:
			n++
		}
	}
	return n, nil
}
