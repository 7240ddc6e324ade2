package dynamostore

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// The engine's records: process ids, idempotency keys, schedules, and the
// list of open executions. Process and idempotency items are keyed by
// "organization_id#id"; reads check the organization attribute as well.

func processKey(org, processID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrProcessKey: avS(org + "#" + processID)}
}

func idempotencyKey(org, key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrIdempotencyKey: avS(org + "#" + key)}
}

// errSampleRefused is the failed condition of a start's schema sample,
// which the start leaves out.
var errSampleRefused = cardflow.Errorf(cardflow.ECONFLICT, "the schema sample belongs to another organization's workflow")

func processNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "no execution has process id %s", id)
}

// processItem returns the item that stores p at the given revision.
func processItem(p *cardflow.Process, revision int64) (map[string]types.AttributeValue, error) {
	rec := *p
	rec.Revision = revision
	body, err := encode("process record", &rec)
	if err != nil {
		return nil, err
	}
	item := processKey(p.OrganizationID, p.ProcessID)
	item[attrOrg] = avS(p.OrganizationID)
	item[attrRevision] = avN(revision)
	item[attrClosed] = avBool(p.Closed)
	item[attrRecord] = body
	if p.ExpiresAt != 0 {
		item[attrExpiresAt] = avN(p.ExpiresAt)
	}
	if kind, at, ok := p.Due(); ok {
		item[attrDueKind], item[attrDueAt] = avS(kind), avN(at)
	}
	return item, nil
}

// Positions of the parts of StartExecution's transaction.
const (
	startProcess = iota
	startExecution
)

func (s *Store) StartExecution(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, idem *cardflow.Idempotency) (err error) {
	defer s.translate("StartExecution", &err)
	return s.start(ctx, e, p, idem, nil)
}

func (s *Store) StartExecutionWithSample(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, idem *cardflow.Idempotency, sc *cardflow.Schema) (err error) {
	defer s.translate("StartExecutionWithSample", &err)
	return s.start(ctx, e, p, idem, sc)
}

// start writes the process record, the execution, the idempotency record
// and the schema sample in one transaction, each on its own condition: the
// process id is free or closed, the execution id is free, the key is free
// or expired at e.CreatedOn, the sample's version is the organization's
// (as PutSchema's). A transaction cancelled by a concurrent one alone
// wrote nothing and starts over; a failed condition is the conflict, but
// for the sample's, which starts over without it.
func (s *Store) start(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, idem *cardflow.Idempotency, sc *cardflow.Schema) error {
	if e.OrganizationID == "" || e.WorkflowID == "" || e.WorkflowExecutionID == "" || p.ProcessID == "" || p.OrganizationID != e.OrganizationID {
		return cardflow.Errorf(cardflow.EINVALID, "an execution needs an organization, a workflow id, an execution id and a process id")
	}
	if idem != nil && (idem.Key == "" || idem.OrganizationID != e.OrganizationID) {
		return cardflow.Errorf(cardflow.EINVALID, "an idempotency record needs a key of the execution's organization")
	}
	ops := make([]types.TransactWriteItem, 2, 4)
	item, err := processItem(p, 1)
	if err != nil {
		return err
	}
	if ops[startProcess], err = s.putOp(TableProcesses, item, expression.AttributeNotExists(expression.Name(attrProcessKey)).
		Or(expression.Name(attrClosed).Equal(expression.Value(true)))); err != nil {
		return err
	}
	// The stored record names the execution that holds the process id.
	ops[startProcess].Put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	w, err := execrecord.Split(e)
	if err != nil {
		return err
	}
	create, err := s.createOps(e, w)
	if err != nil {
		return err
	}
	ops[startExecution] = create[0]
	idemAt, sampleAt := -1, -1
	if idem != nil {
		idemAt = len(ops)
		body, err := encode("idempotency record", idem)
		if err != nil {
			return err
		}
		item := idempotencyKey(idem.OrganizationID, idem.Key)
		item[attrOrg] = avS(idem.OrganizationID)
		item[attrExpiresAt] = avN(idem.ExpiresAt)
		item[attrExpiryGroup] = avS(expiryGroup)
		item[attrRecord] = body
		op, err := s.putOp(TableIdempotency, item, expression.AttributeNotExists(expression.Name(attrIdempotencyKey)).
			Or(expression.Name(attrExpiresAt).LessThanEqual(expression.Value(e.CreatedOn/1000))))
		if err != nil {
			return err
		}
		ops = append(ops, op)
	}
	if sc != nil && sc.OrganizationID != "" && sc.WorkflowID != "" && sc.WorkflowVersion >= 1 {
		item, err := schemaItem(sc)
		if err != nil {
			return err
		}
		op, err := s.putOp(TableSchemas, item, schemaCondition(sc))
		if err != nil {
			return err
		}
		sampleAt, ops = len(ops), append(ops, op)
	}
	// The parts have no condition, so a failed condition is still one of
	// the writes before them.
	if ops = append(ops, create[1:]...); len(ops) > maxTransactItems {
		return tooManyParts(e)
	}
	ops, counted, err := s.withOpenCount(ctx, ops, e)
	if err != nil {
		return err
	}
	try := func() error {
		err := s.transact(ctx, ops...)
		i, stored := failedCondition(err)
		switch {
		case i < 0:
			return err
		case i == counted:
			return cardflow.TooManyOpen(e.OrganizationID, cardflow.OpenExecutionLimit(ctx))
		case i == sampleAt:
			// A sample PutSchema would refuse is left out.
			ops = slices.Delete(ops, i, i+1)
			sampleAt = -1
			if counted > i {
				counted--
			}
			return errSampleRefused
		case i == idemAt:
			return cardflow.Errorf(cardflow.ECONFLICT, "idempotency key %s is already used", idem.Key)
		}
		switch i {
		case startProcess:
			holder, err := decode[cardflow.Process](stored)
			if err != nil {
				return err
			}
			return cardflow.Errorf(cardflow.ECONFLICT, "process id %s belongs to execution %s, which is still open", p.ProcessID, holder.ExecutionID)
		case startExecution:
			return executionExists(e.WorkflowExecutionID)
		}
		return err
	}
	// Twice at most: a refused sample is left out of the second try.
	for err = errSampleRefused; errors.Is(err, errSampleRefused); {
		err = retryRaces(ctx, try)
	}
	if err == nil {
		e.Revision, p.Revision = 1, 1
		execrecord.Wrote(e, w)
	}
	return err
}

func (s *Store) GetProcess(ctx context.Context, org, processID string) (_ *cardflow.Process, err error) {
	defer s.translate("GetProcess", &err)
	if org == "" || processID == "" {
		return nil, processNotFound(processID)
	}
	item, err := s.get(ctx, TableProcesses, processKey(org, processID))
	if err != nil {
		return nil, err
	}
	if !owned(item, org) {
		return nil, processNotFound(processID)
	}
	return decode[cardflow.Process](item)
}

func (s *Store) PutProcess(ctx context.Context, p *cardflow.Process) (err error) {
	defer s.translate("PutProcess", &err)
	if p.OrganizationID == "" || p.ProcessID == "" {
		return processNotFound(p.ProcessID)
	}
	item, err := processItem(p, p.Revision+1)
	if err != nil {
		return err
	}
	err = s.putRevision(ctx, TableProcesses, item, p.OrganizationID, p.Revision, processNotFound(p.ProcessID),
		cardflow.Errorf(cardflow.ECONFLICT, "process %s changed meanwhile", p.ProcessID))
	if err == nil {
		p.Revision++
	}
	return err
}

// GetIdempotency checks the expiry itself: TTL deletes expired items only
// within days.
func (s *Store) GetIdempotency(ctx context.Context, org, key string, now int64) (_ *cardflow.Idempotency, err error) {
	defer s.translate("GetIdempotency", &err)
	missing := cardflow.Errorf(cardflow.ENOTFOUND, "idempotency key %s not found", key)
	if org == "" || key == "" {
		return nil, missing
	}
	item, err := s.get(ctx, TableIdempotency, idempotencyKey(org, key))
	if err != nil {
		return nil, err
	}
	if !owned(item, org) {
		return nil, missing
	}
	rec, err := decode[cardflow.Idempotency](item)
	if err != nil {
		return nil, err
	}
	if rec.ExpiresAt*1000 <= now {
		return nil, missing
	}
	return rec, nil
}

// ListOpenExecutions queries the sparse open_executions index, which holds
// open executions only. Like every global index it trails the table by a
// moment, which start-up, after the previous run's last write, can bear.
func (s *Store) ListOpenExecutions(ctx context.Context) (_ []cardflow.ExecutionRef, err error) {
	defer s.translate("ListOpenExecutions", &err)
	in, err := s.query(TableExecutions, indexOpenExecutions, expression.Key(attrOpenPartition).Equal(expression.Value(openPartition)), nil)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s, in, func(item map[string]types.AttributeValue) (cardflow.ExecutionRef, error) {
		return cardflow.ExecutionRef{
			OrganizationID: stringAttr(item, attrOrg), WorkflowID: stringAttr(item, attrWorkflow), ExecutionID: stringAttr(item, attrExecution),
		}, nil
	})
}

// scheduleGroup is the one partition of the all_schedules index.
const scheduleGroup = "all"

// PutSchedule writes the schedule unless the workflow version's schedule
// belongs to another organization, as PutSchema does.
func (s *Store) PutSchedule(ctx context.Context, sc *cardflow.Schedule) (err error) {
	defer s.translate("PutSchedule", &err)
	if sc.OrganizationID == "" || sc.WorkflowID == "" || sc.WorkflowVersion < 1 {
		return cardflow.Errorf(cardflow.EINVALID, "a schedule needs an organization, a workflow id and a version")
	}
	body, err := encode("schedule", sc)
	if err != nil {
		return err
	}
	item := workflowVersionKey(sc.WorkflowID, sc.WorkflowVersion)
	item[attrOrg] = avS(sc.OrganizationID)
	item[attrScheduleGroup] = avS(scheduleGroup)
	item[attrRecord] = body
	err = s.put(ctx, TableSchedules, item, expression.AttributeNotExists(expression.Name(attrWorkflow)).
		Or(expression.Name(attrOrg).Equal(expression.Value(sc.OrganizationID))))
	if conditionFailed(err) {
		return cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s not found", sc.WorkflowID)
	}
	return err
}

func (s *Store) GetSchedule(ctx context.Context, org, workflowID string, version int) (_ *cardflow.Schedule, err error) {
	defer s.translate("GetSchedule", &err)
	notFound := cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s version %d has no schedule", workflowID, version)
	if org == "" || workflowID == "" {
		return nil, notFound
	}
	item, err := s.get(ctx, TableSchedules, workflowVersionKey(workflowID, version))
	if err != nil {
		return nil, err
	}
	if !owned(item, org) {
		return nil, notFound
	}
	return decode[cardflow.Schedule](item)
}

// ListWorkflowSchedules queries the workflow's partition, newest version
// first.
func (s *Store) ListWorkflowSchedules(ctx context.Context, org, workflowID string) (_ []*cardflow.Schedule, err error) {
	defer s.translate("ListWorkflowSchedules", &err)
	if org == "" || workflowID == "" {
		return []*cardflow.Schedule{}, nil
	}
	sameOrg := expression.Name(attrOrg).Equal(expression.Value(org))
	in, err := s.query(TableSchedules, "", expression.Key(attrWorkflow).Equal(expression.Value(workflowID)), &sameOrg)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s, in, decode[cardflow.Schedule])
}

// DeleteSchedule deletes the schedule where it is org's. A missing one fails
// the condition too: either way nothing of org's is left to delete.
func (s *Store) DeleteSchedule(ctx context.Context, org, workflowID string, version int) (err error) {
	defer s.translate("DeleteSchedule", &err)
	if org == "" || workflowID == "" {
		return nil
	}
	expr, err := expression.NewBuilder().WithCondition(expression.Name(attrOrg).Equal(expression.Value(org))).Build()
	if err != nil {
		return err
	}
	_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table(TableSchedules), Key: workflowVersionKey(workflowID, version),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if conditionFailed(err) {
		return nil
	}
	return err
}

// ListSchedules queries the all_schedules index, which every schedule is
// in, so that no call of the store scans a table.
func (s *Store) ListSchedules(ctx context.Context) (_ []*cardflow.Schedule, err error) {
	defer s.translate("ListSchedules", &err)
	in, err := s.query(TableSchedules, indexAllSchedules, expression.Key(attrScheduleGroup).Equal(expression.Value(scheduleGroup)), nil)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, s, in, decode[cardflow.Schedule])
}
