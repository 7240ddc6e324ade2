package dynamostore

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// The limits table holds, per organization (its partition), three kinds of
// item, told apart by the sort key:
//
//	"override"        the organization's Limits, when it has its own
//	"open"            open_executions: how many of its executions are open
//	"rate#<window>"   requests counted in one rate window; expires_at ends it
//
// The open counter changes in the same transaction as the execution that
// opens or closes, so it is exact; the rate counters are one conditional
// UpdateItem per request.
// Sort keys of the limits table.
const (
	limitOverride = "override"
	limitOpen     = "open"
	limitRate     = "rate#"
)

func limitKey(org, kind string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrOrg: avS(org), attrLimitKey: avS(kind)}
}

func limitsNotFound(org string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "organization %s has no limits of its own", org)
}

// GetLimits reads the override: 1 GetItem.
func (s *Store) GetLimits(ctx context.Context, org string) (_ *cardflow.Limits, err error) {
	defer s.translate("GetLimits", &err)
	if org == "" {
		return nil, limitsNotFound(org)
	}
	item, err := s.get(ctx, TableLimits, limitKey(org, limitOverride))
	if err != nil {
		return nil, err
	}
	if item == nil {
		return nil, limitsNotFound(org)
	}
	return decode[cardflow.Limits](item)
}

// PutLimits writes the override: 1 PutItem.
func (s *Store) PutLimits(ctx context.Context, l *cardflow.Limits) (err error) {
	defer s.translate("PutLimits", &err)
	if l.OrganizationID == "" {
		return cardflow.Errorf(cardflow.EINVALID, "limits need an organization")
	}
	body, err := encode("limits", l)
	if err != nil {
		return err
	}
	item := limitKey(l.OrganizationID, limitOverride)
	item[attrRecord] = body
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table(TableLimits), Item: item})
	return err
}

// DeleteLimits removes the override: 1 DeleteItem.
func (s *Store) DeleteLimits(ctx context.Context, org string) (err error) {
	defer s.translate("DeleteLimits", &err)
	if org == "" {
		return nil
	}
	_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table(TableLimits), Key: limitKey(org, limitOverride)})
	return err
}

// openCountOp adds delta to org's count of open executions, as one write
// of the transaction that opens or closes an execution. A positive delta
// holds only while fewer than max are open (max 0: always); a negative one
// only while the count is positive, so an execution opened before the
// count existed cannot take it below zero.
func (s *Store) openCountOp(org string, delta, max int) (types.TransactWriteItem, error) {
	update := expression.Add(expression.Name(attrOpenExecutions), expression.Value(delta))
	n := expression.Name(attrOpenExecutions)
	var cond expression.ConditionBuilder
	switch {
	case delta < 0:
		cond = n.GreaterThanEqual(expression.Value(-delta))
	case max > 0:
		cond = expression.AttributeNotExists(n).Or(n.LessThan(expression.Value(max)))
	default:
		return s.updateOpNoCondition(TableLimits, limitKey(org, limitOpen), update)
	}
	return s.updateOp(TableLimits, limitKey(org, limitOpen), update, cond)
}

// updateOpNoCondition is updateOp without a condition.
func (s *Store) updateOpNoCondition(table string, key map[string]types.AttributeValue, update expression.UpdateBuilder) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithUpdate(update).Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: s.table(table), Key: key, UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// withOpenCount appends to the writes that create e the increment of its
// organization's open count, refused past the cap ctx carries. It returns
// the position of that write, or -1 when e is not open.
func (s *Store) withOpenCount(ctx context.Context, ops []types.TransactWriteItem, e *cardflow.Execution) ([]types.TransactWriteItem, int, error) {
	if !e.Open() {
		return ops, -1, nil
	}
	op, err := s.openCountOp(e.OrganizationID, 1, cardflow.OpenExecutionLimit(ctx))
	if err != nil {
		return nil, -1, err
	}
	if len(ops)+1 > maxTransactItems {
		return nil, -1, tooManyParts(e)
	}
	return append(ops, op), len(ops), nil
}

// putCounted writes an execution whose write ends it (delta -1: its status
// is final) or opens it again (delta +1: a redrive) together with the change
// of its organization's open count, on the condition that the stored head
// is open (to end) or not (to open again). Opening again is refused
// (THROTTLED) past the cap ctx carries, as a start is. It reports false,
// having written nothing, when the stored execution was not as expected
// (final already, or opened before the count existed): the caller writes
// it the usual way.
func (s *Store) putCounted(ctx context.Context, e *cardflow.Execution, item map[string]types.AttributeValue,
	parts []types.TransactWriteItem, delta int, notFound, changed error) (bool, error) {
	if len(parts)+2 > maxTransactItems {
		return false, nil
	}
	stored := expression.AttributeExists(expression.Name(attrOpenPartition))
	if delta > 0 {
		stored = expression.AttributeNotExists(expression.Name(attrOpenPartition))
	}
	head, err := s.putOp(TableExecutions, item, expression.Name(attrRevision).Equal(expression.Value(e.Revision)).
		And(expression.Name(attrOrg).Equal(expression.Value(e.OrganizationID))).
		And(stored))
	if err != nil {
		return false, err
	}
	head.Put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	maxOpen := 0
	if delta > 0 {
		maxOpen = cardflow.OpenExecutionLimit(ctx)
	}
	count, err := s.openCountOp(e.OrganizationID, delta, maxOpen)
	if err != nil {
		return false, err
	}
	ops := append(append([]types.TransactWriteItem{head}, parts...), count)
	// A transaction that lost a race to another on the same items (the
	// count is shared by the organization's executions) wrote nothing, and
	// starts over; the revision still guards the head.
	done := true
	err = retryRaces(ctx, func() error {
		err := s.transact(ctx, ops...)
		i, stored := failedCondition(err)
		switch {
		case i < 0:
			return err
		case s.processChanged(ops, i):
			return errProcessChanged
		case i == len(ops)-1 && maxOpen > 0:
			return cardflow.TooManyOpen(e.OrganizationID, maxOpen)
		case i == len(ops)-1:
			done = false
		case !owned(stored, e.OrganizationID):
			return notFound
		case storedRevision(stored) == e.Revision:
			// Stored at this revision but not as expected: nothing to count.
			done = false
		default:
			return changed
		}
		return nil
	})
	return done || err != nil, err
}

// Take counts a request of org in the current window of its rate: one
// conditional UpdateItem. A window lasts Burst/Rate seconds (at least one)
// and admits Rate requests a second of it, so the rate holds on average
// and no more than a window's worth come at once; the count of a window
// expires with DynamoDB's TTL.
func (r *RateLimiter) Take(ctx context.Context, org string, l cardflow.Limits) (err error) {
	defer r.s.translate("Take", &err)
	if l.RatePerSecond <= 0 {
		return nil
	}
	window, allowed := rateWindow(l)
	now := r.now()
	start := now.Truncate(window)
	key := limitKey(org, limitRate+strconv.FormatInt(start.UnixMilli(), 10))
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Add(expression.Name(attrRequests), expression.Value(1)).
			Set(expression.Name(attrExpiresAt), expression.Value(start.Add(window).Add(time.Minute).Unix()))).
		WithCondition(expression.AttributeNotExists(expression.Name(attrRequests)).
			Or(expression.Name(attrRequests).LessThan(expression.Value(allowed)))).
		Build()
	if err != nil {
		return err
	}
	_, err = r.s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: r.s.table(TableLimits), Key: key, UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if conditionFailed(err) {
		return cardflow.Throttled(start.Add(window).Sub(now), "organization %s is over its rate of %g requests a second; try again later", org, l.RatePerSecond)
	}
	return err
}

// rateWindow returns the length of a rate window of l and how many
// requests it admits.
func rateWindow(l cardflow.Limits) (time.Duration, int) {
	secs := 1.0
	if l.Burst > 0 {
		secs = max(1, float64(l.Burst)/l.RatePerSecond)
	}
	window := time.Duration(math.Ceil(secs)) * time.Second
	// The epsilon keeps 0.0003 × 10,000 from reading as 2.
	return window, max(1, int(math.Floor(l.RatePerSecond*window.Seconds()+1e-9)))
}

// RateLimiter is the cardflow.RateLimiter of a deployment on AWS: the
// count is shared by every Lambda instance, in the limits table.
type RateLimiter struct {
	s   *Store
	now func() time.Time
}

// NewRateLimiter returns the rate limiter over s's limits table, reading
// the clock with now (time.Now when nil).
func NewRateLimiter(s *Store, now func() time.Time) *RateLimiter {
	if now == nil {
		now = time.Now
	}
	return &RateLimiter{s: s, now: now}
}

func storedRevision(item map[string]types.AttributeValue) int64 {
	n, _ := numAttr[int64](item, attrRevision)
	return n
}
