package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Teams conversations are keyed by conversation id alone, so a
// conversation belongs to one organization at most; the by_organization
// index lists an organization's.

func conversationKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrConversation: avS(id)}
}

// RegisterConversation writes the record unless another organization
// holds the id: 1 PutItem with a condition.
func (s *Store) RegisterConversation(ctx context.Context, c *cardflow.TeamsConversation) (err error) {
	defer s.translate("RegisterConversation", &err)
	if err := c.Validate(); err != nil {
		return err
	}
	body, err := encode("conversation", c)
	if err != nil {
		return err
	}
	item := conversationKey(c.ConversationID)
	item[attrOrg] = avS(c.OrganizationID)
	item[attrRecord] = body
	expr, err := expression.NewBuilder().WithCondition(expression.Or(
		expression.AttributeNotExists(expression.Name(attrConversation)),
		expression.Name(attrOrg).Equal(expression.Value(c.OrganizationID)))).Build()
	if err != nil {
		return err
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table(TableConversations), Item: item, ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if conditionFailed(err) {
		return cardflow.ConversationTaken(c.ConversationID)
	}
	return err
}

// GetConversation is FindConversation that answers ENOTFOUND for another
// organization's: 1 GetItem.
func (s *Store) GetConversation(ctx context.Context, org, conversationID string) (*cardflow.TeamsConversation, error) {
	c, err := s.FindConversation(ctx, conversationID)
	if err == nil && c.OrganizationID != org {
		return nil, cardflow.ConversationNotFound(conversationID)
	}
	return c, err
}

// FindConversation reads the record: 1 GetItem.
func (s *Store) FindConversation(ctx context.Context, conversationID string) (_ *cardflow.TeamsConversation, err error) {
	defer s.translate("FindConversation", &err)
	if !cardflow.ValidConversationID(conversationID) {
		return nil, cardflow.ConversationNotFound(conversationID)
	}
	item, err := s.get(ctx, TableConversations, conversationKey(conversationID))
	if err != nil {
		return nil, err
	}
	if item == nil {
		return nil, cardflow.ConversationNotFound(conversationID)
	}
	return decode[cardflow.TeamsConversation](item)
}

// ListConversations queries the by_organization index: 1 Query per MB.
func (s *Store) ListConversations(ctx context.Context, org string) (_ []*cardflow.TeamsConversation, err error) {
	defer s.translate("ListConversations", &err)
	if org == "" {
		return []*cardflow.TeamsConversation{}, nil
	}
	in, err := s.query(TableConversations, indexByOrganization, expression.Key(attrOrg).Equal(expression.Value(org)), nil)
	if err != nil {
		return nil, err
	}
	in.ScanIndexForward = aws.Bool(true)
	return queryAll(ctx, s, in, decode[cardflow.TeamsConversation])
}

// DeleteConversation removes org's record: 1 DeleteItem with a condition.
func (s *Store) DeleteConversation(ctx context.Context, org, conversationID string) (err error) {
	defer s.translate("DeleteConversation", &err)
	if org == "" || !cardflow.ValidConversationID(conversationID) {
		return cardflow.ConversationNotFound(conversationID)
	}
	expr, err := expression.NewBuilder().WithCondition(expression.Name(attrOrg).Equal(expression.Value(org))).Build()
	if err != nil {
		return err
	}
	_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table(TableConversations), Key: conversationKey(conversationID), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if conditionFailed(err) {
		return cardflow.ConversationNotFound(conversationID)
	}
	return err
}
