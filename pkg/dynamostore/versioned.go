package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// versioned stores a record kind that is saved in numbered versions and
// published: workflows and cards share one implementation through it.
//
// Besides its versions, a record has a head item at version 0, written by
// its first publish, that names the latest version. Until then version 1 is
// latest. The head has no list key, so it stays out of the organization
// index, and gets refuse version 0.
type versioned[T, K any] struct {
	noun    string
	table   string
	id, ver string // key attribute names
	// fields returns the record's organization and the fields the store owns.
	fields    func(*T) (org string, id *string, version *int, latest *cardflow.Flag)
	setStatus func(*T, string)
	touch     func(rec *T, by string, now int64)
	pageKey   func(*T) K
	after     func(K) (id string, version int)
}

var workflows = versioned[cardflow.Workflow, cardflow.WorkflowKey]{
	noun:      "workflow",
	table:     TableWorkflows,
	id:        attrWorkflow,
	ver:       attrWFVersion,
	fields:    (*cardflow.Workflow).VersionFields,
	setStatus: (*cardflow.Workflow).SetStatus,
	touch:     (*cardflow.Workflow).Touch,
	pageKey:   (*cardflow.Workflow).PageKey,
	after:     cardflow.WorkflowKey.Position,
}

var cards = versioned[cardflow.Card, cardflow.CardKey]{
	noun:      "card",
	table:     TableCards,
	id:        attrCard,
	ver:       attrCVersion,
	fields:    (*cardflow.Card).VersionFields,
	setStatus: (*cardflow.Card).SetStatus,
	touch:     (*cardflow.Card).Touch,
	pageKey:   (*cardflow.Card).PageKey,
	after:     cardflow.CardKey.Position,
}

func (kd *versioned[T, K]) notFound(id string, version int) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "%s %s version %d not found", kd.noun, id, version)
}

func (kd *versioned[T, K]) key(id string, version int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{kd.id: avS(id), kd.ver: avN(version)}
}

// listKey is the sort key of a version in the organization index; see
// attrListKey.
func listKey(id string, version int) string { return fmt.Sprintf("%s#%010d", id, version) }

// item returns the item that stores rec.
func (kd *versioned[T, K]) item(rec *T) (map[string]types.AttributeValue, error) {
	org, id, version, latest := kd.fields(rec)
	body, err := encode(kd.noun, rec)
	if err != nil {
		return nil, err
	}
	item := kd.key(*id, *version)
	item[attrOrg] = avS(org)
	item[attrListKey] = avS(listKey(*id, *version))
	item[attrLatest] = avBool(bool(*latest))
	item[attrRecord] = body
	return item, nil
}

// load decodes a stored version; the latest attribute overrides the
// record's copy, which publishing leaves behind on the version it demotes.
func (kd *versioned[T, K]) load(item map[string]types.AttributeValue) (*T, error) {
	rec, err := decode[T](item)
	if err != nil {
		return nil, err
	}
	if v, ok := item[attrLatest].(*types.AttributeValueMemberBOOL); ok {
		_, _, _, latest := kd.fields(rec)
		*latest = cardflow.Flag(v.Value)
	}
	return rec, nil
}

func (kd *versioned[T, K]) get(ctx context.Context, s *Store, org, id string, version int) (*T, error) {
	if org == "" || id == "" || version < 1 {
		return nil, kd.notFound(id, version)
	}
	item, err := s.get(ctx, kd.table, kd.key(id, version))
	if err != nil {
		return nil, err
	}
	if !owned(item, org) {
		return nil, kd.notFound(id, version)
	}
	return kd.load(item)
}

// exists reports whether org has the record id: a record exists from its
// version 1 on.
func (kd *versioned[T, K]) exists(ctx context.Context, s *Store, org, id string) (bool, error) {
	if org == "" || id == "" {
		return false, nil
	}
	expr, err := expression.NewBuilder().WithProjection(expression.NamesList(expression.Name(attrOrg))).Build()
	if err != nil {
		return false, err
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table(kd.table), Key: kd.key(id, 1), ConsistentRead: aws.Bool(true),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(),
	})
	if err != nil {
		return false, err
	}
	return owned(out.Item, org), nil
}

// lastVersion returns the highest version of id in org, 0 when org has no
// such record.
func (kd *versioned[T, K]) lastVersion(ctx context.Context, s *Store, org, id string) (int, error) {
	in, err := s.query(kd.table, "", expression.Key(kd.id).Equal(expression.Value(id)), nil)
	if err != nil {
		return 0, err
	}
	in.Limit = aws.Int32(1)
	out, err := s.client.Query(ctx, in)
	if err != nil || len(out.Items) == 0 || !owned(out.Items[0], org) {
		return 0, err
	}
	return numAttr[int](out.Items[0], kd.ver)
}

// latest reads the head, then the version it names (version 1 while there is
// no head). A publish that commits between the two reads leaves that version
// no longer latest; latest then reads both again.
func (kd *versioned[T, K]) latest(ctx context.Context, s *Store, org, id string) (*T, error) {
	notFound := cardflow.Errorf(cardflow.ENOTFOUND, "%s %s not found", kd.noun, id)
	if org == "" || id == "" {
		return nil, notFound
	}
	for range maxAttempts {
		head, err := s.get(ctx, kd.table, kd.key(id, 0))
		if err != nil {
			return nil, err
		}
		version := 1
		if len(head) > 0 {
			if !owned(head, org) {
				return nil, notFound
			}
			if version, err = numAttr[int](head, attrLatestVersion); err != nil {
				return nil, err
			}
		}
		item, err := s.get(ctx, kd.table, kd.key(id, version))
		if err != nil {
			return nil, err
		}
		if !owned(item, org) {
			return nil, notFound
		}
		rec, err := kd.load(item)
		if err != nil {
			return nil, err
		}
		if _, _, _, latest := kd.fields(rec); *latest {
			return rec, nil
		}
	}
	return nil, cardflow.Errorf(cardflow.ECONFLICT, "too many concurrent publishes of %s %s; try again", kd.noun, id)
}

// save stores rec as a new DRAFT version. The next version number comes
// from the highest stored version and is written only if still free; a
// concurrent save that took it makes this one read again and take the next.
func (kd *versioned[T, K]) save(ctx context.Context, s *Store, rec *T) error {
	org, id, version, latest := kd.fields(rec)
	if org == "" {
		return cardflow.Errorf(cardflow.EINVALID, "a %s needs an organization", kd.noun)
	}
	isNew := *id == ""
	return retryRaces(ctx, func() error {
		if isNew {
			*id = cardflow.NewID(time.Now())
			*version, *latest = 1, true
		} else {
			last, err := kd.lastVersion(ctx, s, org, *id)
			if err != nil {
				return err
			}
			if last == 0 {
				return cardflow.Errorf(cardflow.ENOTFOUND, "%s %s not found", kd.noun, *id)
			}
			// latest stays on the version in force until one is published.
			*version, *latest = last+1, false
		}
		kd.setStatus(rec, cardflow.StatusDraft)
		item, err := kd.item(rec)
		if err != nil {
			return err
		}
		return s.put(ctx, kd.table, item, expression.AttributeNotExists(expression.Name(kd.id)))
	})
}

// list queries the organization index in descending list key order. The
// Query is bound to org whatever the page key says, so a key naming another
// organization cannot reach its records.
func (kd *versioned[T, K]) list(ctx context.Context, s *Store, org string, opt cardflow.ListOptions[K]) (cardflow.Page[*T, K], error) {
	page := cardflow.Page[*T, K]{Items: []*T{}}
	if org == "" {
		return page, nil
	}
	in, err := s.query(kd.table, indexByOrganization, expression.Key(attrOrg).Equal(expression.Value(org)), nil)
	if err != nil {
		return page, err
	}
	if opt.After != nil {
		id, version := kd.after(*opt.After)
		if id == "" {
			// Nothing sorts below an empty id.
			return page, nil
		}
		in.ExclusiveStartKey = kd.key(id, version)
		in.ExclusiveStartKey[attrOrg] = avS(org)
		in.ExclusiveStartKey[attrListKey] = avS(listKey(id, version))
	}
	return queryPage(ctx, s, in, opt.Limit, kd.load, kd.pageKey)
}

// publish makes one version ACTIVE and the only latest one in a single
// transaction: it writes the version, clears latest on the version that
// had it, and moves the head to the version, on the condition that the head
// still names the version it was read with. Of concurrent publishes one
// commits, the others read again and go on from there.
func (kd *versioned[T, K]) publish(ctx context.Context, s *Store, org, id string, version int, by string, now int64) (*T, error) {
	if org == "" || id == "" || version < 1 {
		return nil, kd.notFound(id, version)
	}
	var rec *T
	err := retryRaces(ctx, func() error {
		out, err := s.client.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
			{Get: &types.Get{TableName: s.table(kd.table), Key: kd.key(id, 0)}},
			{Get: &types.Get{TableName: s.table(kd.table), Key: kd.key(id, version)}},
		}})
		if err != nil {
			return err
		}
		head, item := out.Responses[0].Item, out.Responses[1].Item
		if !owned(item, org) {
			return kd.notFound(id, version)
		}
		if rec, err = kd.load(item); err != nil {
			return err
		}
		prev, headCond := 1, expression.AttributeNotExists(expression.Name(kd.id))
		if len(head) > 0 {
			if prev, err = numAttr[int](head, attrLatestVersion); err != nil {
				return err
			}
			headCond = expression.Name(attrLatestVersion).Equal(expression.Value(prev))
		}

		_, _, _, latest := kd.fields(rec)
		*latest = true
		kd.setStatus(rec, cardflow.StatusActive)
		kd.touch(rec, by, now)
		item, err = kd.item(rec)
		if err != nil {
			return err
		}
		newHead := kd.key(id, 0)
		newHead[attrOrg] = avS(org)
		newHead[attrLatestVersion] = avN(version)
		headOp, err := s.putOp(kd.table, newHead, headCond)
		if err != nil {
			return err
		}
		versionOp, err := s.putOp(kd.table, item, expression.Name(attrOrg).Equal(expression.Value(org)))
		if err != nil {
			return err
		}
		ops := []types.TransactWriteItem{headOp, versionOp}
		if prev != version {
			clear, err := s.updateOp(kd.table, kd.key(id, prev),
				expression.Set(expression.Name(attrLatest), expression.Value(false)),
				expression.AttributeExists(expression.Name(kd.id)))
			if err != nil {
				return err
			}
			ops = append(ops, clear)
		}
		return s.transact(ctx, ops...)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

func (s *Store) SaveWorkflowVersion(ctx context.Context, w *cardflow.Workflow) (err error) {
	defer s.translate("SaveWorkflowVersion", &err)
	return workflows.save(ctx, s, w)
}

func (s *Store) GetWorkflow(ctx context.Context, org, workflowID string, version int) (_ *cardflow.Workflow, err error) {
	defer s.translate("GetWorkflow", &err)
	return workflows.get(ctx, s, org, workflowID, version)
}

func (s *Store) GetLatestWorkflow(ctx context.Context, org, workflowID string) (_ *cardflow.Workflow, err error) {
	defer s.translate("GetLatestWorkflow", &err)
	return workflows.latest(ctx, s, org, workflowID)
}

func (s *Store) ListWorkflows(ctx context.Context, org string, opt cardflow.ListOptions[cardflow.WorkflowKey]) (_ cardflow.Page[*cardflow.Workflow, cardflow.WorkflowKey], err error) {
	defer s.translate("ListWorkflows", &err)
	return workflows.list(ctx, s, org, opt)
}

func (s *Store) PublishWorkflow(ctx context.Context, org, workflowID string, version int, by string, now int64) (_ *cardflow.Workflow, err error) {
	defer s.translate("PublishWorkflow", &err)
	return workflows.publish(ctx, s, org, workflowID, version, by, now)
}

func (s *Store) SaveCardVersion(ctx context.Context, c *cardflow.Card) (err error) {
	defer s.translate("SaveCardVersion", &err)
	return cards.save(ctx, s, c)
}

func (s *Store) GetCard(ctx context.Context, org, cardID string, version int) (_ *cardflow.Card, err error) {
	defer s.translate("GetCard", &err)
	return cards.get(ctx, s, org, cardID, version)
}

func (s *Store) ListCards(ctx context.Context, org string, opt cardflow.ListOptions[cardflow.CardKey]) (_ cardflow.Page[*cardflow.Card, cardflow.CardKey], err error) {
	defer s.translate("ListCards", &err)
	return cards.list(ctx, s, org, opt)
}

func (s *Store) PublishCard(ctx context.Context, org, cardID string, version int, by string, now int64) (_ *cardflow.Card, err error) {
	defer s.translate("PublishCard", &err)
	return cards.publish(ctx, s, org, cardID, version, by, now)
}

// GetLatestActiveCard reads the card's latest version as GetLatestWorkflow
// reads a workflow's.
func (s *Store) GetLatestActiveCard(ctx context.Context, org, cardID string) (_ *cardflow.Card, err error) {
	defer s.translate("GetLatestActiveCard", &err)
	c, err := cards.latest(ctx, s, org, cardID)
	if err != nil {
		return nil, err
	}
	if c.Status != cardflow.StatusActive {
		return nil, cardflow.Errorf(cardflow.ENOTFOUND, "card %s has no active version: publish one first", cardID)
	}
	return c, nil
}
