package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// workflowVersionKey is the key of schemas and schedules.
func workflowVersionKey(workflowID string, version int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrWorkflow: avS(workflowID), attrWFVersion: avN(version)}
}

// PutSchema writes the schema record unless the workflow version's record
// belongs to another organization: schemas are keyed by workflow, and a
// workflow of another organization does not exist for the caller.
func (s *Store) PutSchema(ctx context.Context, sc *cardflow.Schema) (err error) {
	defer s.translate("PutSchema", &err)
	if sc.OrganizationID == "" || sc.WorkflowID == "" || sc.WorkflowVersion < 1 {
		return cardflow.Errorf(cardflow.EINVALID, "a schema needs an organization, a workflow id and a version")
	}
	item, err := schemaItem(sc)
	if err != nil {
		return err
	}
	err = s.put(ctx, TableSchemas, item, schemaCondition(sc))
	if conditionFailed(err) {
		return cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s not found", sc.WorkflowID)
	}
	return err
}

// schemaItem is the item of a schema record, for PutSchema and for the
// sample a start writes, on schemaCondition.
func schemaItem(sc *cardflow.Schema) (map[string]types.AttributeValue, error) {
	b, err := sc.MarshalRecord()
	if err != nil {
		return nil, err
	}
	body, err := encoded("schema", b)
	if err != nil {
		return nil, err
	}
	item := workflowVersionKey(sc.WorkflowID, sc.WorkflowVersion)
	item[attrOrg] = avS(sc.OrganizationID)
	item[attrRecord] = body
	return item, nil
}

// schemaCondition holds where no record of another organization is stored
// under the schema's key.
func schemaCondition(sc *cardflow.Schema) expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name(attrWorkflow)).
		Or(expression.Name(attrOrg).Equal(expression.Value(sc.OrganizationID)))
}

func (s *Store) GetSchema(ctx context.Context, org, workflowID string, version int) (_ *cardflow.Schema, err error) {
	defer s.translate("GetSchema", &err)
	notFound := cardflow.Errorf(cardflow.ENOTFOUND, "schema of workflow %s version %d not found", workflowID, version)
	if org == "" || workflowID == "" {
		return nil, notFound
	}
	item, err := s.get(ctx, TableSchemas, workflowVersionKey(workflowID, version))
	if err != nil {
		return nil, err
	}
	if !owned(item, org) {
		return nil, notFound
	}
	sc := new(cardflow.Schema)
	if err := sc.UnmarshalRecord([]byte(stringAttr(item, attrRecord))); err != nil {
		return nil, err
	}
	return sc, nil
}

// keyIDClaim is the key of the item that claims a key id. Hashes are hex,
// so no key's hash can take this form.
func keyIDClaim(keyID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrKeyHash: avS("key_id#" + keyID)}
}

// loadAPIKey decodes a stored key. Claims have no record and are not keys.
func loadAPIKey(item map[string]types.AttributeValue) (*cardflow.APIKey, error) {
	k, err := decode[cardflow.APIKey](item)
	if err != nil {
		return nil, err
	}
	// Revoking sets the attribute without rewriting the record.
	if k.RevokedOn, err = numAttr[int64](item, attrRevokedOn); err != nil {
		return nil, err
	}
	return k, nil
}

// CreateAPIKey writes the key and the claim of its key id together, each
// only where it is free.
func (s *Store) CreateAPIKey(ctx context.Context, k *cardflow.APIKey) (err error) {
	defer s.translate("CreateAPIKey", &err)
	if k.Hash == "" || k.KeyID == "" || k.OrganizationID == "" {
		return cardflow.Errorf(cardflow.EINVALID, "an API key needs a hash, a key id and an organization")
	}
	body, err := encode("API key", k)
	if err != nil {
		return err
	}
	free := expression.AttributeNotExists(expression.Name(attrKeyHash))
	key, err := s.putOp(TableAPIKeys, map[string]types.AttributeValue{
		attrKeyHash: avS(k.Hash), attrKeyID: avS(k.KeyID), attrOrg: avS(k.OrganizationID),
		attrKeyGroup: avS("all"), attrRecord: body,
	}, free)
	if err != nil {
		return err
	}
	claim := keyIDClaim(k.KeyID)
	claim[attrKeyTarget] = avS(k.Hash)
	claimOp, err := s.putOp(TableAPIKeys, claim, free)
	if err != nil {
		return err
	}
	err = s.transact(ctx, key, claimOp)
	if conditionFailed(err) {
		return cardflow.Errorf(cardflow.ECONFLICT, "an API key with this hash or key id already exists")
	}
	return err
}

func (s *Store) GetAPIKeyByHash(ctx context.Context, hash string) (_ *cardflow.APIKey, err error) {
	defer s.translate("GetAPIKeyByHash", &err)
	notFound := cardflow.Errorf(cardflow.ENOTFOUND, "API key not found")
	if hash == "" {
		return nil, notFound
	}
	item, err := s.get(ctx, TableAPIKeys, map[string]types.AttributeValue{attrKeyHash: avS(hash)})
	if err != nil {
		return nil, err
	}
	if _, ok := item[attrRecord]; !ok {
		return nil, notFound
	}
	return loadAPIKey(item)
}

// ListAPIKeys queries an index by key id, of one organization or of all
// keys, so keys come in descending key id order.
func (s *Store) ListAPIKeys(ctx context.Context, org string) (_ []*cardflow.APIKey, err error) {
	defer s.translate("ListAPIKeys", &err)
	index, key := indexByOrganization, expression.Key(attrOrg).Equal(expression.Value(org))
	if org == "" {
		index, key = indexAllKeys, expression.Key(attrKeyGroup).Equal(expression.Value("all"))
	}
	in, err := s.query(TableAPIKeys, index, key, nil)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s, in, loadAPIKey)
}

// RevokeAPIKey finds the hash through the key id's claim and sets
// revoked_on unless it is set: a second revocation keeps the first time.
func (s *Store) RevokeAPIKey(ctx context.Context, keyID string, now int64) (_ *cardflow.APIKey, err error) {
	defer s.translate("RevokeAPIKey", &err)
	notFound := cardflow.Errorf(cardflow.ENOTFOUND, "API key %s not found", keyID)
	if keyID == "" {
		return nil, notFound
	}
	claim, err := s.get(ctx, TableAPIKeys, keyIDClaim(keyID))
	if err != nil {
		return nil, err
	}
	hash := stringAttr(claim, attrKeyTarget)
	if hash == "" {
		return nil, notFound
	}
	revoked := expression.Name(attrRevokedOn)
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Set(revoked, expression.IfNotExists(revoked, expression.Value(now)))).
		WithCondition(expression.AttributeExists(expression.Name(attrKeyHash))).
		Build()
	if err != nil {
		return nil, err
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table(TableAPIKeys), Key: map[string]types.AttributeValue{attrKeyHash: avS(hash)},
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: types.ReturnValueAllNew,
	})
	if conditionFailed(err) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	return loadAPIKey(out.Attributes)
}
