package dynamostore

import (
	"context"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// expiryGroup is the one partition of the by_expiry index.
const expiryGroup = "all"

// queryDue walks the items of a sparse index whose sort key is at or before
// until, oldest first, handing each to take, until take has taken limit of
// them. take reports whether it took the item.
func (s *Store) queryDue(ctx context.Context, table, index, partition, value, sort string, until int64, limit int, take func(map[string]types.AttributeValue) bool) error {
	if limit < 1 {
		return nil
	}
	in, err := s.query(table, index, expression.Key(partition).Equal(expression.Value(value)).
		And(expression.Key(sort).LessThanEqual(expression.Value(until))), nil)
	if err != nil {
		return err
	}
	in.ScanIndexForward = aws.Bool(true)
	taken := 0
	for {
		in.Limit = aws.Int32(int32(limit - taken))
		page, err := s.client.Query(ctx, in)
		if err != nil {
			return err
		}
		for _, item := range page.Items {
			if take(item) {
				taken++
			}
		}
		if taken >= limit || page.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// queryAllDue is queryDue taking every item.
func (s *Store) queryAllDue(ctx context.Context, table, index, partition, value, sort string, until int64, limit int) ([]map[string]types.AttributeValue, error) {
	out := []map[string]types.AttributeValue{}
	err := s.queryDue(ctx, table, index, partition, value, sort, until, limit, func(item map[string]types.AttributeValue) bool {
		out = append(out, item)
		return true
	})
	return out, err
}

// dueProcesses returns up to limit process records of one due kind. A
// record that cannot be read is logged, by its ids only, and left out, so
// that it holds up none of the others.
func (s *Store) dueProcesses(ctx context.Context, kind string, until int64, limit int) ([]*cardflow.Process, error) {
	out := []*cardflow.Process{}
	err := s.queryDue(ctx, TableProcesses, indexByDue, attrDueKind, kind, attrDueAt, until, limit, func(item map[string]types.AttributeValue) bool {
		p, err := decode[cardflow.Process](item)
		if err != nil {
			org := stringAttr(item, attrOrg)
			s.log.Warn("housekeeping skips a process record that cannot be read",
				slog.String("organization", org), slog.String("process_id", strings.TrimPrefix(stringAttr(item, attrProcessKey), org+"#")))
			return false
		}
		out = append(out, p)
		return true
	})
	return out, err
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
	items, err := s.queryAllDue(ctx, TableProcesses, indexByDue, attrDueKind, cardflow.DueClosed, attrDueAt, now, limit)
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
	items, err := s.queryAllDue(ctx, TableIdempotency, indexByExpiry, attrExpiryGroup, expiryGroup, attrExpiresAt, now/1000, limit)
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
