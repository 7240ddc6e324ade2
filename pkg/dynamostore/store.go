// Package dynamostore is the cardflow.Store on Amazon DynamoDB, one table per
// record kind; tables.go defines them.
//
// Each item keeps its key and index attributes at the top level and the
// rest of the record as JSON in the "record" attribute, so records
// round-trip exactly as in the embedded store. A page key is the key of the
// page's last item; the next Query starts after it.
//
// DynamoDB requests per call, as the request counting test checks (a list
// page over DynamoDB's 1 MB response limit takes one Query more per MB; a
// call that loses a race to a concurrent write repeats its requests):
//
//	GetWorkflow, GetCard, GetSchema, GetAPIKeyByHash  1 GetItem
//	GetExecution, GetExecutionJSON          1 GetItem (the head) and 1 Query per MB (its parts); 1 GetItem for an execution stored before parts
//	GetExecutionHead                        as GetExecution, the head's GetItem projected to what it reads
//	GetExecutionRevision, GetExecutionStatus  1 GetItem projected to the revision, or to the head's record
//	GetProcess, GetIdempotency, GetSchedule  1 GetItem
//	GetLatestWorkflow, GetLatestActiveCard  2 GetItem (the head, then the version it names)
//	ListWorkflows, ListCards, ListExecutions  1 Query per page
//	SearchExecutions                        1 Query of a global index and 1 BatchGetItem (the heads) per page
//	CreateBulkOperation                     1 TransactWriteItems (and 2 GetItem when its client token was used)
//	GetBulkOperation, PutBulkOperation      1 GetItem, 1 PutItem
//	ListRunningBulkOperations               1 Query of a global index per MB
//	ListWorkflowExecutions                  1 Query per page, and 1 GetItem when the page is empty
//	ListAPIKeys, ListWorkflowSchedules      1 Query per MB
//	ListOpenExecutions, ListSchedules       1 Query of a global index per MB
//	SaveWorkflowVersion, SaveCardVersion    1 PutItem for a new record; 1 Query (Limit 1) and 1 PutItem for a version
//	PublishWorkflow, PublishCard            1 TransactGetItems and 1 TransactWriteItems
//	CreateExecution                         1 TransactWriteItems
//	PutExecution                            1 PutItem when no part changed, else 1 TransactWriteItems; 1 GetItem (its process record) and 1 TransactWriteItems when it ends the execution (with its organization's open count and the close of its process record)
//	PutSchema                               1 PutItem
//	PutProcess, PutSchedule                 1 PutItem
//	StartExecution, StartExecutionWithSample  1 TransactWriteItems
//	DeleteSchedule                          1 DeleteItem
//	CreateAPIKey                            1 TransactWriteItems
//	RevokeAPIKey                            1 GetItem and 1 UpdateItem
//	ListOverdueWaits, ListStaleEarlyResumes  1 Query of a global index per MB
//	DeleteExpiredProcesses, DeleteExpiredIdempotency  1 Query of a global index per MB, and 1 DeleteItem per record
//	GetLimits, PutLimits, DeleteLimits      1 GetItem, PutItem, DeleteItem
//	RateLimiter.Take                        1 UpdateItem
//	RegisterConversation, DeleteConversation  1 PutItem, DeleteItem, with a condition
//	GetConversation, FindConversation       1 GetItem
//	ListConversations                       1 Query of a global index per MB
//
// No call scans a table: lists of every organization query an index with
// one constant partition.
package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Client is the part of the DynamoDB API the store calls; *dynamodb.Client
// has it.
type Client interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactGetItems(context.Context, *dynamodb.TransactGetItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// Store is a cardflow.Store on DynamoDB; its methods follow the port's doc
// comments. It is safe for concurrent use, also from several processes:
// writes that must not overlap are conditional.
type Store struct {
	client Client
	prefix string
	log    *slog.Logger
}

var _ cardflow.Store = (*Store)(nil)

// Option configures New.
type Option func(*Store)

// WithTablePrefix sets the prefix of every table name (default
// DefaultPrefix), so several deployments can share an account.
func WithTablePrefix(prefix string) Option { return func(s *Store) { s.prefix = prefix } }

// WithLogger sets where failures of DynamoDB are logged with their details
// (default slog.Default()); callers only ever see a plain message.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// New returns a store that uses client and the tables CreateTables makes.
func New(client Client, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("dynamostore: client is nil")
	}
	s := &Store{client: client, prefix: DefaultPrefix, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	if err := checkPrefix(s.prefix); err != nil {
		return nil, fmt.Errorf("dynamostore: %w", err)
	}
	if s.log == nil {
		return nil, errors.New("dynamostore: logger is nil")
	}
	return s, nil
}

// Close does nothing: the client holds no resources of its own.
func (s *Store) Close() error { return nil }

func (s *Store) table(name string) *string { return aws.String(s.prefix + name) }

// maxRecordBytes bounds a record's JSON: DynamoDB items hold 400 KB, and
// the key and index attributes beside the record need some of that.
const maxRecordBytes = 390 << 10

// Attribute values.
func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func avN[N int | int64](v N) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(int64(v), 10)}
}
func avBool(v bool) types.AttributeValue {
	return &types.AttributeValueMemberBOOL{Value: v}
}

// stringAttr returns a string attribute of item, "" when it is missing.
func stringAttr(item map[string]types.AttributeValue, name string) string {
	v, _ := item[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// numAttr returns a number attribute of item, 0 when it is missing.
func numAttr[N int | int64](item map[string]types.AttributeValue, name string) (N, error) {
	var n N
	if v, ok := item[name]; ok {
		if err := attributevalue.Unmarshal(v, &n); err != nil {
			return 0, fmt.Errorf("attribute %s: %w", name, err)
		}
	}
	return n, nil
}

// owned reports whether item exists and belongs to org: a record of
// another organization is treated as absent.
func owned(item map[string]types.AttributeValue, org string) bool {
	return len(item) > 0 && stringAttr(item, attrOrg) == org
}

// encode returns the JSON of rec as the record attribute, refusing records
// that would not fit in an item.
func encode(noun string, rec any) (types.AttributeValue, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	return encoded(noun, b)
}

func encoded(noun string, b []byte) (types.AttributeValue, error) {
	if len(b) > maxRecordBytes {
		return nil, cardflow.Errorf(cardflow.ETOOLARGE, "the %s takes %d KB, more than the %d KB a stored record can hold", noun, len(b)>>10, maxRecordBytes>>10)
	}
	return avS(string(b)), nil
}

// decode reads the record attribute of item.
func decode[T any](item map[string]types.AttributeValue) (*T, error) {
	rec := new(T)
	if err := json.Unmarshal([]byte(stringAttr(item, attrRecord)), rec); err != nil {
		return nil, &cardflow.UnreadableError{Err: fmt.Errorf("dynamostore: decode %T: %w", rec, err)}
	}
	return rec, nil
}

// get reads one item, consistently: reads often follow a write of the same
// flow (save, then show). It returns nil when there is none.
func (s *Store) get(ctx context.Context, table string, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// put writes item if cond holds.
func (s *Store) put(ctx context.Context, table string, item map[string]types.AttributeValue, cond expression.ConditionBuilder) error {
	in, err := s.putInput(table, item, cond)
	if err != nil {
		return err
	}
	_, err = s.client.PutItem(ctx, in)
	return err
}

func (s *Store) putInput(table string, item map[string]types.AttributeValue, cond expression.ConditionBuilder) (*dynamodb.PutItemInput, error) {
	op, err := s.putOp(table, item, cond)
	if err != nil {
		return nil, err
	}
	p := op.Put
	return &dynamodb.PutItemInput{
		TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
		ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues,
	}, nil
}

// putRevision replaces the item of org at revision expected with item,
// which holds the next revision. A failed condition brings the stored item
// along, so one request tells a missing record (or another organization's:
// notFound) from one another writer changed first (changed).
func (s *Store) putRevision(ctx context.Context, table string, item map[string]types.AttributeValue, org string, expected int64, notFound, changed error) error {
	in, err := s.putInput(table, item, expression.Name(attrRevision).Equal(expression.Value(expected)).
		And(expression.Name(attrOrg).Equal(expression.Value(org))))
	if err != nil {
		return err
	}
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	_, err = s.client.PutItem(ctx, in)
	if i, stored := failedCondition(err); i >= 0 {
		if !owned(stored, org) {
			return notFound
		}
		return changed
	}
	return err
}

// putOp is put as one part of a transaction.
func (s *Store) putOp(table string, item map[string]types.AttributeValue, cond expression.ConditionBuilder) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: s.table(table), Item: item, ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// updateOp is an update of the item at key as one part of a transaction.
func (s *Store) updateOp(table string, key map[string]types.AttributeValue, update expression.UpdateBuilder, cond expression.ConditionBuilder) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithUpdate(update).WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: s.table(table), Key: key, UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// transact writes every op or none.
func (s *Store) transact(ctx context.Context, ops ...types.TransactWriteItem) error {
	_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
	return err
}

// query is a Query in list order (descending) for queryPage. Queries of
// base tables read consistently; global indexes cannot.
func (s *Store) query(table, index string, key expression.KeyConditionBuilder, filter *expression.ConditionBuilder) (*dynamodb.QueryInput, error) {
	b := expression.NewBuilder().WithKeyCondition(key)
	if filter != nil {
		b = b.WithFilter(*filter)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName: s.table(table), KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(false),
	}
	if index == "" {
		in.ConsistentRead = aws.Bool(true)
	} else {
		in.IndexName = aws.String(index)
	}
	return in, nil
}

// queryPage reads one page of a list. It asks for limit+1 items, so LastKey
// is set only when more items follow and no page ends in an empty trailing
// page, and goes on while DynamoDB stops short of them (its 1 MB response
// limit, or items a filter dropped). The item past the page is never
// decoded: its existence is all LastKey needs.
func queryPage[T, K any](ctx context.Context, s *Store, in *dynamodb.QueryInput, limit int,
	load func(map[string]types.AttributeValue) (*T, error), keyOf func(*T) K) (cardflow.Page[*T, K], error) {
	limit = cardflow.PageSize(limit)
	page := cardflow.Page[*T, K]{Items: make([]*T, 0, limit)}
	for {
		in.Limit = aws.Int32(int32(limit + 1 - len(page.Items)))
		out, err := s.client.Query(ctx, in)
		if err != nil {
			return page, err
		}
		for _, item := range out.Items {
			if len(page.Items) == limit {
				last := keyOf(page.Items[limit-1])
				page.LastKey = &last
				return page, nil
			}
			rec, err := load(item)
			if err != nil {
				return page, err
			}
			page.Items = append(page.Items, rec)
		}
		if out.LastEvaluatedKey == nil {
			return page, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// queryAll reads every item a query finds.
func queryAll[T any](ctx context.Context, s *Store, in *dynamodb.QueryInput, load func(map[string]types.AttributeValue) (T, error)) ([]T, error) {
	all := []T{}
	for {
		out, err := s.client.Query(ctx, in)
		if err != nil {
			return all, err
		}
		for _, item := range out.Items {
			rec, err := load(item)
			if err != nil {
				return all, err
			}
			all = append(all, rec)
		}
		if out.LastEvaluatedKey == nil {
			return all, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// maxAttempts bounds how often a call that lost a race to a concurrent
// write of the same record (a version number, a publish) starts over.
const maxAttempts = 30

// retryRaces runs op until it does not lose a race, waiting a growing,
// jittered while between attempts so that racing writers spread out.
func retryRaces(ctx context.Context, op func() error) error {
	wait := 5 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := op()
		if !lostRace(err) {
			return err
		}
		if attempt == maxAttempts {
			return cardflow.Errorf(cardflow.ECONFLICT, "too many concurrent changes of the same record; try again")
		}
		t := time.NewTimer(rand.N(wait) + time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}
