package app

import (
	"context"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// GetExecution returns one execution.
func (s *Executions) GetExecution(ctx context.Context, workflowID, executionID string) (*cardflow.Execution, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetExecution(ctx, p.OrganizationID, workflowID, executionID)
}

// GetExecutionJSON returns one execution encoded as the API shows it, as
// the store encodes it.
func (s *Executions) GetExecutionJSON(ctx context.Context, workflowID, executionID string) ([]byte, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetExecutionJSON(ctx, p.OrganizationID, workflowID, executionID)
}

// ListWorkflowExecutions lists the executions of one workflow, newest first.
func (s *Executions) ListWorkflowExecutions(ctx context.Context, workflowID string, opt cardflow.ListOptions[cardflow.ExecutionKey]) (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey]{}, err
	}
	opt.Limit = cardflow.PageSize(opt.Limit)
	return s.store.ListWorkflowExecutions(ctx, p.OrganizationID, workflowID, opt)
}

// ListExecutions lists the executions of the organization, newest first.
func (s *Executions) ListExecutions(ctx context.Context, opt cardflow.ListOptions[cardflow.ExecutionKey]) (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey]{}, err
	}
	opt.Limit = cardflow.PageSize(opt.Limit)
	return s.store.ListExecutions(ctx, p.OrganizationID, opt)
}
