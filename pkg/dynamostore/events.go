package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// The outbox of events and the webhooks live in the executions table, in
// partitions of their own as an execution's parts do: an execution's
// events are written in the transaction that writes it (eventOps), with
// the permissions its writers already hold. Their items carry no
// organization, so no index and no read of an organization's executions
// meets them. The outbox is spread over eventShards partitions, so that
// its writes do not all land on one.
const (
	eventShards       = 8
	eventsPartition   = "pending_events#"
	webhooksPartition = "webhooks"
)

// EventPartition is the outbox partition of an execution's events; one
// execution's events share one, in order.
func EventPartition(executionID string) string {
	h := fnv.New32a()
	h.Write([]byte(executionID))
	return fmt.Sprintf("%s%d", eventsPartition, h.Sum32()%eventShards)
}

// eventOps returns the writes that add w's events to the outbox.
func (s *Store) eventOps(w *execrecord.Write) ([]types.TransactWriteItem, error) {
	ops := make([]types.TransactWriteItem, 0, len(w.Events))
	for _, ev := range w.Events {
		body, err := encode("event", ev)
		if err != nil {
			return nil, err
		}
		item := executionKey(EventPartition(ev.ExecutionID), ev.ID)
		item[attrRecord] = body
		ops = append(ops, types.TransactWriteItem{Put: &types.Put{TableName: s.table(TableExecutions), Item: item}})
	}
	return ops, nil
}

// ListPendingEvents reads up to limit events after after from each outbox
// partition and keeps the first limit of them in id order: one Query per
// partition and page.
func (s *Store) ListPendingEvents(ctx context.Context, after string, limit int) (_ []*cardflow.Published, err error) {
	defer s.translate("ListPendingEvents", &err)
	out := []*cardflow.Published{}
	for shard := 0; shard < eventShards; shard++ {
		key := expression.Key(attrWorkflow).Equal(expression.Value(fmt.Sprintf("%s%d", eventsPartition, shard)))
		if after != "" {
			key = key.And(expression.Key(attrExecution).GreaterThan(expression.Value(after)))
		}
		expr, err := expression.NewBuilder().WithKeyCondition(key).Build()
		if err != nil {
			return nil, err
		}
		in := &dynamodb.QueryInput{
			TableName: s.table(TableExecutions), KeyConditionExpression: expr.KeyCondition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit)),
		}
		res, err := s.client.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, item := range res.Items {
			ev, err := decode[cardflow.Published](item)
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
	}
	slices.SortFunc(out, func(a, b *cardflow.Published) int { return strings.Compare(a.ID, b.ID) })
	return out[:min(len(out), limit)], nil
}

func (s *Store) DeletePendingEvents(ctx context.Context, events []*cardflow.Published) (err error) {
	defer s.translate("DeletePendingEvents", &err)
	for _, ev := range events {
		if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table(TableExecutions), Key: executionKey(EventPartition(ev.ExecutionID), ev.ID)}); err != nil {
			return err
		}
	}
	return nil
}

func webhookKey(org, id string) map[string]types.AttributeValue {
	return executionKey(webhooksPartition, org+"#"+id)
}

func (s *Store) CreateWebhook(ctx context.Context, w *cardflow.Webhook) (err error) {
	defer s.translate("CreateWebhook", &err)
	if w.OrganizationID == "" || w.WebhookID == "" || w.URL == "" {
		return cardflow.Errorf(cardflow.EINVALID, "a webhook needs an organization, an id and a URL")
	}
	body, err := encode("webhook", w)
	if err != nil {
		return err
	}
	item := webhookKey(w.OrganizationID, w.WebhookID)
	item[attrRecord] = body
	err = s.put(ctx, TableExecutions, item, expression.AttributeNotExists(expression.Name(attrWorkflow)))
	if i, _ := failedCondition(err); i >= 0 {
		return cardflow.Errorf(cardflow.ECONFLICT, "webhook %s already exists", w.WebhookID)
	}
	return err
}

func (s *Store) ListWebhooks(ctx context.Context, org string) (_ []*cardflow.Webhook, err error) {
	defer s.translate("ListWebhooks", &err)
	key := expression.Key(attrWorkflow).Equal(expression.Value(webhooksPartition))
	if org != "" {
		key = key.And(expression.Key(attrExecution).BeginsWith(org + "#"))
	}
	expr, err := expression.NewBuilder().WithKeyCondition(key).Build()
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName: s.table(TableExecutions), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	}
	all, err := queryAll(ctx, s, in, decode[cardflow.Webhook])
	if err != nil {
		return nil, err
	}
	// An organization whose id continues another's with "#" shares its
	// key range: the record says whose a webhook is.
	out := []*cardflow.Webhook{}
	for _, w := range all {
		if org == "" || w.OrganizationID == org {
			out = append(out, w)
		}
	}
	return out, nil
}

func (s *Store) DeleteWebhook(ctx context.Context, org, webhookID string) (err error) {
	defer s.translate("DeleteWebhook", &err)
	if org == "" || webhookID == "" {
		return webhookNotFound(webhookID)
	}
	expr, err := expression.NewBuilder().WithCondition(expression.AttributeExists(expression.Name(attrWorkflow))).Build()
	if err != nil {
		return err
	}
	_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table(TableExecutions), Key: webhookKey(org, webhookID), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(),
	})
	if i, _ := failedCondition(err); i >= 0 {
		return webhookNotFound(webhookID)
	}
	return err
}

// RotateWebhookSecret reads the webhook and writes it back on condition
// that its record is still the one read, so that two rotations at once
// cannot both keep the same previous secret: the later one reads again.
func (s *Store) RotateWebhookSecret(ctx context.Context, org, webhookID, secret string, previousUntil int64) (_ *cardflow.Webhook, err error) {
	defer s.translate("RotateWebhookSecret", &err)
	if org == "" || webhookID == "" {
		return nil, webhookNotFound(webhookID)
	}
	for range 3 {
		item, err := s.get(ctx, TableExecutions, webhookKey(org, webhookID))
		if err != nil {
			return nil, err
		}
		if item == nil {
			return nil, webhookNotFound(webhookID)
		}
		w, err := decode[cardflow.Webhook](item)
		if err != nil {
			return nil, err
		}
		w.PreviousSecret, w.PreviousSecretUntil, w.Secret = w.Secret, previousUntil, secret
		body, err := encode("webhook", w)
		if err != nil {
			return nil, err
		}
		read := stringAttr(item, attrRecord)
		item[attrRecord] = body
		err = s.put(ctx, TableExecutions, item, expression.Name(attrRecord).Equal(expression.Value(read)))
		if i, _ := failedCondition(err); i >= 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	return nil, cardflow.Errorf(cardflow.ECONFLICT, "webhook %s changed while its secret was rotated; try again", webhookID)
}

func webhookNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "webhook %s not found", id)
}

// StreamedEvent returns the event of an outbox item as a DynamoDB stream
// record shows it: the item's workflow_id and record attributes. ok is
// false for any other item of the executions table.
func StreamedEvent(partition, record string) (_ *cardflow.Published, ok bool, err error) {
	if !strings.HasPrefix(partition, eventsPartition) {
		return nil, false, nil
	}
	ev := new(cardflow.Published)
	if err := json.Unmarshal([]byte(record), ev); err != nil {
		return nil, true, fmt.Errorf("dynamostore: decode event: %w", err)
	}
	return ev, true, nil
}
