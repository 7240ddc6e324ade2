package app

import (
	"context"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// SearchExecutions finds the executions of the caller's organization that
// f selects, newest first (see cardflow.SearchStore).
func (s *Executions) SearchExecutions(ctx context.Context, f cardflow.ExecutionFilter, opt cardflow.ListOptions[cardflow.SearchKey]) (cardflow.Page[*cardflow.Execution, cardflow.SearchKey], error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return cardflow.Page[*cardflow.Execution, cardflow.SearchKey]{}, err
	}
	if err := f.Validate(); err != nil {
		return cardflow.Page[*cardflow.Execution, cardflow.SearchKey]{}, err
	}
	if f.Empty() {
		return cardflow.Page[*cardflow.Execution, cardflow.SearchKey]{Items: []*cardflow.Execution{}}, nil
	}
	opt.Limit = cardflow.PageSize(opt.Limit)
	return s.store.SearchExecutions(ctx, p.OrganizationID, f, opt)
}
