package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// An execution is stored in parts (cardflow.Execution.Split). Its head is
// the item keyed by workflow and execution id, which the lists read; its
// parts (input, workflow, one per step) are items of the same table in a
// partition of their own, keyed "workflow_id#execution_id" and the part's
// name, so one Query reads them and no list of a workflow's partition
// meets them. Parts carry no organization, so no index holds them; they
// are reached through a head of the caller's organization only. A write
// puts the head and the parts that changed in one transaction, on the
// head's revision.

// maxTransactItems is how many writes one TransactWriteItems may hold.
const maxTransactItems = 100

func executionKey(workflowID, executionID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrWorkflow: avS(workflowID), attrExecution: avS(executionID)}
}

// partsPartition is the partition of an execution's parts.
func partsPartition(workflowID, executionID string) string { return workflowID + "#" + executionID }

func partKey(e *cardflow.Execution, name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrWorkflow: avS(partsPartition(e.WorkflowID, e.WorkflowExecutionID)), attrExecution: avS(name)}
}

// headItem returns the item that stores the head of e at the given
// revision; the revision is what writes condition on.
func headItem(e *cardflow.Execution, w *execrecord.Write, revision int64) (map[string]types.AttributeValue, error) {
	body, err := encoded("execution's head", w.Head)
	if err != nil {
		return nil, err
	}
	item := executionKey(e.WorkflowID, e.WorkflowExecutionID)
	item[attrOrg] = avS(e.OrganizationID)
	item[attrRevision] = avN(revision)
	item[attrRecord] = body
	item[attrParts] = avBool(true)
	if e.Open() {
		item[attrOpenPartition] = avS(openPartition)
	}
	setSearchAttributes(item, e)
	return item, nil
}

// partOps returns the writes of w's parts, made at revision.
func (s *Store) partOps(e *cardflow.Execution, w *execrecord.Write, revision int64) ([]types.TransactWriteItem, error) {
	ops := make([]types.TransactWriteItem, 0, len(w.Parts)+len(w.Gone))
	for _, p := range w.Parts {
		noun := "execution's " + p.Name
		if id, ok := strings.CutPrefix(p.Name, execrecord.PartStep); ok {
			noun = "record of step " + id
		}
		body, err := encoded(noun, p.Value)
		if err != nil {
			return nil, err
		}
		item := partKey(e, p.Name)
		item[attrRecord], item[attrRevision] = body, avN(revision)
		ops = append(ops, types.TransactWriteItem{Put: &types.Put{TableName: s.table(TableExecutions), Item: item}})
	}
	for _, name := range w.Gone {
		ops = append(ops, types.TransactWriteItem{Delete: &types.Delete{TableName: s.table(TableExecutions), Key: partKey(e, name)}})
	}
	return ops, nil
}

// tooManyParts is the error of a write that changes more parts than a
// transaction holds; the engine changes one step per write.
func tooManyParts(e *cardflow.Execution) error {
	return cardflow.Errorf(cardflow.ETOOLARGE, "execution %s: one write may change at most %d of its parts", e.WorkflowExecutionID, maxTransactItems-4)
}

// openPartition is the one partition of the open_executions index.
const openPartition = "open"

// loadExecution decodes a list item: the head, or the whole record of an
// execution stored before parts. When a whole record does not decode, the
// error carries the execution's head: the record pruned of what lies too
// deep, if it decodes so.
func loadExecution(item map[string]types.AttributeValue) (*cardflow.Execution, error) {
	b := []byte(stringAttr(item, attrRecord))
	if _, ok := item[attrParts]; ok {
		e, err := execrecord.DecodeHead(b)
		if err != nil {
			return nil, fmt.Errorf("dynamostore: %w", err)
		}
		return e, nil
	}
	e, err := execrecord.Unmarshal(b)
	if err == nil {
		return e, nil
	}
	ue := &cardflow.UnreadableError{Err: fmt.Errorf("dynamostore: decode execution: %w", err)}
	if head, err := execrecord.Unmarshal(cardflow.Prune(b)); err == nil {
		ue.Head = head
	}
	return nil, ue
}

func executionNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "execution %s not found", id)
}

func pageKeyOf(e *cardflow.Execution) cardflow.ExecutionKey {
	return cardflow.ExecutionKey{WorkflowID: e.WorkflowID, WorkflowExecutionID: e.WorkflowExecutionID}
}

// createOps returns the writes that create e at revision 1: its head, only
// where its key is free, and its parts.
func (s *Store) createOps(e *cardflow.Execution, w *execrecord.Write) ([]types.TransactWriteItem, error) {
	item, err := headItem(e, w, 1)
	if err != nil {
		return nil, err
	}
	head, err := s.putOp(TableExecutions, item, expression.AttributeNotExists(expression.Name(attrWorkflow)))
	if err != nil {
		return nil, err
	}
	parts, err := s.partOps(e, w, 1)
	if err != nil {
		return nil, err
	}
	events, err := s.eventOps(w)
	if err != nil {
		return nil, err
	}
	return append(append([]types.TransactWriteItem{head}, events...), parts...), nil
}

// CreateExecution writes the execution at revision 1 only where its key is
// free. Keys are per workflow; execution ids are ULIDs, so they are also
// unique across the organization, as the organization index expects.
func (s *Store) CreateExecution(ctx context.Context, e *cardflow.Execution) (err error) {
	defer s.translate("CreateExecution", &err)
	if e.OrganizationID == "" || e.WorkflowID == "" || e.WorkflowExecutionID == "" {
		return cardflow.Errorf(cardflow.EINVALID, "an execution needs an organization, a workflow id and an execution id")
	}
	w, err := execrecord.Split(e)
	if err != nil {
		return err
	}
	ops, err := s.createOps(e, w)
	if err != nil {
		return err
	}
	if len(ops) > maxTransactItems {
		return tooManyParts(e)
	}
	if ops, _, err = s.withOpenCount(ctx, ops, e); err != nil {
		return err
	}
	err = retryRaces(ctx, func() error {
		err := s.transact(ctx, ops...)
		if i, _ := failedCondition(err); i == 0 {
			return executionExists(e.WorkflowExecutionID)
		}
		return err
	})
	if err == nil {
		e.Revision = 1
		execrecord.Wrote(e, w)
	}
	return err
}

func executionExists(id string) error {
	return cardflow.Errorf(cardflow.ECONFLICT, "execution %s already exists", id)
}

// PutExecution replaces the head where it exists in the same organization
// at e.Revision, with the parts that changed in the same transaction; a
// write that changed no part is one PutItem. An execution stored whole
// before parts gets all its parts written first, where a transaction does
// not hold them: its stored head does not read parts, so until the head
// is replaced they are not seen.
func (s *Store) PutExecution(ctx context.Context, e *cardflow.Execution) (err error) {
	defer s.translate("PutExecution", &err)
	if e.OrganizationID == "" || e.WorkflowID == "" || e.WorkflowExecutionID == "" {
		return executionNotFound(e.WorkflowExecutionID)
	}
	w, err := execrecord.Split(e)
	if err != nil {
		return err
	}
	item, err := headItem(e, w, e.Revision+1)
	if err != nil {
		return err
	}
	notFound := executionNotFound(e.WorkflowExecutionID)
	changed := cardflow.Errorf(cardflow.ECONFLICT, "execution %s changed meanwhile", e.WorkflowExecutionID)
	parts, err := s.partOps(e, w, e.Revision+1)
	if err != nil {
		return err
	}
	// Events go first: parts past a transaction's room may be written
	// before it, and an event must not be stored without its change.
	events, err := s.eventOps(w)
	if err != nil {
		return err
	}
	parts = append(events, parts...)
	if !e.EndsOnWrite() {
		done := false
		if e.ReopensOnWrite() {
			done, err = s.putCounted(ctx, e, item, parts, +1, notFound, changed)
		}
		switch {
		case done:
		case len(parts) == 0:
			err = s.putRevision(ctx, TableExecutions, item, e.OrganizationID, e.Revision, notFound, changed)
		default:
			err = s.putWithParts(ctx, e, w, item, parts, notFound, changed)
		}
	} else {
		err = s.putEnd(ctx, e, w, item, parts, notFound, changed)
	}
	if err == nil {
		e.Revision++
		execrecord.Wrote(e, w)
	}
	return err
}

// putEnd writes an execution whose write ends it, with the close of its
// process record (closeOp) and the change of its organization's open
// count in the same transaction. A process record that changed between
// its read and the transaction (a resume claimed a wait) is read again.
func (s *Store) putEnd(ctx context.Context, e *cardflow.Execution, w *execrecord.Write, item map[string]types.AttributeValue,
	parts []types.TransactWriteItem, notFound, changed error) error {
	for attempt := 1; ; attempt++ {
		closing, err := s.closeOp(ctx, e)
		if err != nil {
			return err
		}
		ops := parts
		if closing != nil {
			// First, so that parts past a transaction's room, written
			// before it, never include it.
			ops = append([]types.TransactWriteItem{*closing}, parts...)
		}
		done, err := s.putCounted(ctx, e, item, ops, -1, notFound, changed)
		if !done {
			if len(ops) == 0 {
				return s.putRevision(ctx, TableExecutions, item, e.OrganizationID, e.Revision, notFound, changed)
			}
			err = s.putWithParts(ctx, e, w, item, ops, notFound, changed)
		}
		if !errors.Is(err, errProcessChanged) {
			return err
		}
		if attempt == maxAttempts {
			return cardflow.Errorf(cardflow.ECONFLICT, "the process record of execution %s changed too often while it ended; try again", e.WorkflowExecutionID)
		}
	}
}

// errProcessChanged is the failed condition of closeOp's write.
var errProcessChanged = cardflow.Errorf(cardflow.ECONFLICT, "the process record changed meanwhile")

// processChanged reports whether the write at i of ops, whose condition
// failed, is that of a process record.
func (s *Store) processChanged(ops []types.TransactWriteItem, i int) bool {
	return i >= 0 && i < len(ops) && ops[i].Put != nil && aws.ToString(ops[i].Put.TableName) == aws.ToString(s.table(TableProcesses))
}

// closeOp returns the write that closes the process record of e, for the
// transaction that ends e, as cardflow.CloseProcess would: nil when the
// record is missing, unreadable (left as cardflow.FailUnreadable leaves
// it), another execution's or closed already. It expires
// cardflow.ClosedProcessTTL after e's modified_on. Its condition is the
// revision read.
func (s *Store) closeOp(ctx context.Context, e *cardflow.Execution) (*types.TransactWriteItem, error) {
	pid := e.State.ProcessID
	if pid == "" {
		return nil, nil
	}
	stored, err := s.get(ctx, TableProcesses, processKey(e.OrganizationID, pid))
	if err != nil || !owned(stored, e.OrganizationID) {
		return nil, err
	}
	p, err := decode[cardflow.Process](stored)
	if err != nil || p.ExecutionID != e.WorkflowExecutionID || p.Closed {
		return nil, nil
	}
	p.Closed, p.ExpiresAt = true, e.ModifiedOn/1000+int64(cardflow.ClosedProcessTTL/time.Second)
	item, err := processItem(p, p.Revision+1)
	if err != nil {
		return nil, err
	}
	op, err := s.putOp(TableProcesses, item, expression.Name(attrRevision).Equal(expression.Value(p.Revision)))
	return &op, err
}

func (s *Store) putWithParts(ctx context.Context, e *cardflow.Execution, w *execrecord.Write, item map[string]types.AttributeValue,
	parts []types.TransactWriteItem, notFound, changed error) error {
	room := maxTransactItems - 1
	if len(parts) > room {
		if !w.Whole {
			return tooManyParts(e)
		}
		for early := parts[room:]; len(early) > 0; early = early[min(len(early), maxTransactItems):] {
			if err := s.transact(ctx, early[:min(len(early), maxTransactItems)]...); err != nil {
				return err
			}
		}
		parts = parts[:room]
	}
	head, err := s.putOp(TableExecutions, item, expression.Name(attrRevision).Equal(expression.Value(e.Revision)).
		And(expression.Name(attrOrg).Equal(expression.Value(e.OrganizationID))))
	if err != nil {
		return err
	}
	head.Put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	ops := append([]types.TransactWriteItem{head}, parts...)
	err = s.transact(ctx, ops...)
	i, stored := failedCondition(err)
	switch {
	case i == 0 && !owned(stored, e.OrganizationID):
		return notFound
	case i == 0:
		return changed
	case s.processChanged(ops, i):
		return errProcessChanged
	}
	return err
}

// GetExecution reads the head, then the parts (readStored).
func (s *Store) GetExecution(ctx context.Context, org, workflowID, executionID string) (_ *cardflow.Execution, err error) {
	defer s.translate("GetExecution", &err)
	item, parts, revision, err := s.readStored(ctx, org, workflowID, executionID)
	if err != nil {
		return nil, err
	}
	if _, ok := item[attrParts]; !ok {
		return loadExecution(item)
	}
	e, err := execrecord.Join([]byte(stringAttr(item, attrRecord)), parts, revision)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: %w", err)
	}
	return e, nil
}

// GetExecutionJSON encodes the execution as the API shows it, copying its
// input, logs and steps from the parts without decoding them.
func (s *Store) GetExecutionJSON(ctx context.Context, org, workflowID, executionID string) (_ []byte, err error) {
	defer s.translate("GetExecutionJSON", &err)
	item, parts, _, err := s.readStored(ctx, org, workflowID, executionID)
	if err != nil {
		return nil, err
	}
	if _, ok := item[attrParts]; !ok {
		e, err := loadExecution(item)
		if err != nil {
			return nil, err
		}
		return json.Marshal(e)
	}
	b, err := execrecord.JSON([]byte(stringAttr(item, attrRecord)), parts)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: %w", err)
	}
	return b, nil
}

// GetExecutionHead reads the head, then the parts, which it checks but
// does not decode (execrecord.CheckedHead).
func (s *Store) GetExecutionHead(ctx context.Context, org, workflowID, executionID string) (_ *cardflow.Execution, err error) {
	defer s.translate("GetExecutionHead", &err)
	item, parts, revision, err := s.readStored(ctx, org, workflowID, executionID, attrOrg, attrRevision, attrParts, attrRecord)
	if err != nil {
		return nil, err
	}
	if _, ok := item[attrParts]; !ok {
		return loadExecution(item)
	}
	e, err := execrecord.CheckedHead([]byte(stringAttr(item, attrRecord)), parts)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: %w", err)
	}
	e.Revision = revision
	return e, nil
}

// GetExecutionRevision reads the revision attribute alone, which every
// write of the execution sets; an execution stored whole before parts is
// read whole.
func (s *Store) GetExecutionRevision(ctx context.Context, org, workflowID, executionID string) (_ int64, err error) {
	defer s.translate("GetExecutionRevision", &err)
	item, err := s.getHead(ctx, org, workflowID, executionID, attrOrg, attrRevision, attrParts)
	if err != nil {
		return 0, err
	}
	if _, ok := item[attrParts]; !ok {
		e, err := s.GetExecution(ctx, org, workflowID, executionID)
		if err != nil {
			return 0, err
		}
		return e.Revision, nil
	}
	return numAttr[int64](item, attrRevision)
}

// GetExecutionStatus reads the status and modified_on from the head's
// record alone, leaving out the search and index attributes.
func (s *Store) GetExecutionStatus(ctx context.Context, org, workflowID, executionID string) (status string, modifiedOn int64, err error) {
	defer s.translate("GetExecutionStatus", &err)
	item, err := s.getHead(ctx, org, workflowID, executionID, attrOrg, attrRecord)
	if err != nil {
		return "", 0, err
	}
	if status, modifiedOn, err = execrecord.HeadStatus([]byte(stringAttr(item, attrRecord))); err != nil {
		return "", 0, fmt.Errorf("dynamostore: %w", err)
	}
	return status, modifiedOn, nil
}

// getHead reads the named attributes of the head of an execution of org,
// consistently; all of them when names is empty.
func (s *Store) getHead(ctx context.Context, org, workflowID, executionID string, names ...string) (map[string]types.AttributeValue, error) {
	if org == "" || workflowID == "" || executionID == "" {
		return nil, executionNotFound(executionID)
	}
	in := &dynamodb.GetItemInput{TableName: s.table(TableExecutions), Key: executionKey(workflowID, executionID), ConsistentRead: aws.Bool(true)}
	if len(names) > 0 {
		proj := expression.NamesList(expression.Name(names[0]))
		for _, n := range names[1:] {
			proj = proj.AddNames(expression.Name(n))
		}
		expr, err := expression.NewBuilder().WithProjection(proj).Build()
		if err != nil {
			return nil, err
		}
		in.ProjectionExpression, in.ExpressionAttributeNames = expr.Projection(), expr.Names()
	}
	out, err := s.client.GetItem(ctx, in)
	if err != nil {
		return nil, err
	}
	if !owned(out.Item, org) {
		return nil, executionNotFound(executionID)
	}
	return out.Item, nil
}

// readStored reads the head of an execution of org (the named attributes
// of it, or all), then its parts, if it is stored in parts. A part written
// after the head was read (its revision is newer) means a write came in
// between: the read starts over, so it never joins parts of two revisions.
func (s *Store) readStored(ctx context.Context, org, workflowID, executionID string, names ...string) (map[string]types.AttributeValue, []execrecord.Part, int64, error) {
	for attempt := 1; ; attempt++ {
		item, err := s.getHead(ctx, org, workflowID, executionID, names...)
		if err != nil {
			return nil, nil, 0, err
		}
		if _, ok := item[attrParts]; !ok {
			return item, nil, 0, nil
		}
		revision, err := numAttr[int64](item, attrRevision)
		if err != nil {
			return nil, nil, 0, err
		}
		parts, newer, err := s.readParts(ctx, workflowID, executionID, revision)
		if err != nil || !newer || attempt == maxAttempts {
			return item, parts, revision, err
		}
	}
}

// readParts reads the parts of an execution and tells whether any was
// written after revision.
func (s *Store) readParts(ctx context.Context, workflowID, executionID string, revision int64) ([]execrecord.Part, bool, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key(attrWorkflow).Equal(expression.Value(partsPartition(workflowID, executionID)))).Build()
	if err != nil {
		return nil, false, err
	}
	in := &dynamodb.QueryInput{
		TableName: s.table(TableExecutions), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	}
	newer := false
	parts, err := queryAll(ctx, s, in, func(item map[string]types.AttributeValue) (execrecord.Part, error) {
		rev, err := numAttr[int64](item, attrRevision)
		newer = newer || rev > revision
		return execrecord.Part{Name: stringAttr(item, attrExecution), Value: []byte(stringAttr(item, attrRecord))}, err
	})
	return parts, newer, err
}

// ListWorkflowExecutions queries the workflow's partition; the page key's
// workflow_id is ignored, the partition already fixes it. The filter on the
// organization keeps another organization's executions out even where one
// was stored under this workflow id.
//
// Only an empty page costs a second read, to tell a workflow without
// executions from an unknown one: executions are created for workflows of
// their organization only, so a page with items proves the workflow.
func (s *Store) ListWorkflowExecutions(ctx context.Context, org, workflowID string, opt cardflow.ListOptions[cardflow.ExecutionKey]) (_ cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], err error) {
	defer s.translate("ListWorkflowExecutions", &err)
	page := cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey]{Items: []*cardflow.Execution{}}
	// Nothing sorts below an empty execution id.
	if org != "" && workflowID != "" && (opt.After == nil || opt.After.WorkflowExecutionID != "") {
		sameOrg := expression.Name(attrOrg).Equal(expression.Value(org))
		in, err := s.query(TableExecutions, "", expression.Key(attrWorkflow).Equal(expression.Value(workflowID)), &sameOrg)
		if err != nil {
			return page, err
		}
		if opt.After != nil {
			in.ExclusiveStartKey = executionKey(workflowID, opt.After.WorkflowExecutionID)
		}
		if page, err = queryPage(ctx, s, in, opt.Limit, loadExecution, pageKeyOf); err != nil || len(page.Items) > 0 {
			return page, err
		}
	}
	ok, err := workflows.exists(ctx, s, org, workflowID)
	if err == nil && !ok {
		err = cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s not found", workflowID)
	}
	return page, err
}

// ListExecutions queries the organization index by execution id.
func (s *Store) ListExecutions(ctx context.Context, org string, opt cardflow.ListOptions[cardflow.ExecutionKey]) (_ cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], err error) {
	defer s.translate("ListExecutions", &err)
	page := cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey]{Items: []*cardflow.Execution{}}
	if org == "" || (opt.After != nil && opt.After.WorkflowExecutionID == "") {
		return page, nil
	}
	in, err := s.query(TableExecutions, indexByOrganization, expression.Key(attrOrg).Equal(expression.Value(org)), nil)
	if err != nil {
		return page, err
	}
	if opt.After != nil {
		// An index's start key holds the table's key too.
		in.ExclusiveStartKey = executionKey(opt.After.WorkflowID, opt.After.WorkflowExecutionID)
		in.ExclusiveStartKey[attrOrg] = avS(org)
	}
	return queryPage(ctx, s, in, opt.Limit, loadExecution, pageKeyOf)
}
