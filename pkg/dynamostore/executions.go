package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func executionKey(workflowID, executionID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrWorkflow: avS(workflowID), attrExecution: avS(executionID)}
}

// executionItem returns the item that stores e at the given revision. The
// record holds the engine's state and the revision too; the top-level
// revision is what writes condition on.
func executionItem(e *cardflow.Execution, revision int64) (map[string]types.AttributeValue, error) {
	rec := *e
	rec.Revision = revision
	b, err := rec.MarshalRecord()
	if err != nil {
		return nil, err
	}
	body, err := encoded("execution", b)
	if err != nil {
		return nil, err
	}
	item := executionKey(e.WorkflowID, e.WorkflowExecutionID)
	item[attrOrg] = avS(e.OrganizationID)
	item[attrRevision] = avN(revision)
	item[attrRecord] = body
	if e.Open() {
		item[attrOpenPartition] = avS(openPartition)
	}
	return item, nil
}

// openPartition is the one partition of the open_executions index.
const openPartition = "open"

// loadExecution decodes a stored execution. When it does not decode, the
// error carries the execution's head: the record pruned of what lies too
// deep, if it decodes so.
func loadExecution(item map[string]types.AttributeValue) (*cardflow.Execution, error) {
	b := []byte(stringAttr(item, attrRecord))
	e := new(cardflow.Execution)
	err := e.UnmarshalRecord(b)
	if err == nil {
		return e, nil
	}
	ue := &cardflow.UnreadableError{Err: fmt.Errorf("dynamostore: decode execution: %w", err)}
	if head := new(cardflow.Execution); head.UnmarshalRecord(cardflow.Prune(b)) == nil {
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

// CreateExecution writes the execution at revision 1 only where its key is
// free. Keys are per workflow; execution ids are ULIDs, so they are also
// unique across the organization, as the organization index expects.
func (s *Store) CreateExecution(ctx context.Context, e *cardflow.Execution) (err error) {
	defer s.translate("CreateExecution", &err)
	if e.OrganizationID == "" || e.WorkflowID == "" || e.WorkflowExecutionID == "" {
		return cardflow.Errorf(cardflow.EINVALID, "an execution needs an organization, a workflow id and an execution id")
	}
	item, err := executionItem(e, 1)
	if err != nil {
		return err
	}
	err = s.put(ctx, TableExecutions, item, expression.AttributeNotExists(expression.Name(attrWorkflow)))
	if conditionFailed(err) {
		return executionExists(e.WorkflowExecutionID)
	}
	if err == nil {
		e.Revision = 1
	}
	return err
}

func executionExists(id string) error {
	return cardflow.Errorf(cardflow.ECONFLICT, "execution %s already exists", id)
}

// PutExecution replaces the execution where it exists in the same
// organization at e.Revision.
func (s *Store) PutExecution(ctx context.Context, e *cardflow.Execution) (err error) {
	defer s.translate("PutExecution", &err)
	if e.OrganizationID == "" || e.WorkflowID == "" || e.WorkflowExecutionID == "" {
		return executionNotFound(e.WorkflowExecutionID)
	}
	item, err := executionItem(e, e.Revision+1)
	if err != nil {
		return err
	}
	err = s.putRevision(ctx, TableExecutions, item, e.OrganizationID, e.Revision, executionNotFound(e.WorkflowExecutionID),
		cardflow.Errorf(cardflow.ECONFLICT, "execution %s changed meanwhile", e.WorkflowExecutionID))
	if err == nil {
		e.Revision++
	}
	return err
}

func (s *Store) GetExecution(ctx context.Context, org, workflowID, executionID string) (_ *cardflow.Execution, err error) {
	defer s.translate("GetExecution", &err)
	if org == "" || workflowID == "" || executionID == "" {
		return nil, executionNotFound(executionID)
	}
	item, err := s.get(ctx, TableExecutions, executionKey(workflowID, executionID))
	if err != nil {
		return nil, err
	}
	if !owned(item, org) {
		return nil, executionNotFound(executionID)
	}
	return loadExecution(item)
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
