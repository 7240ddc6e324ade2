package dynamostore

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Approvals are keyed by "organization_id#approval_id"; reads check the
// organization attribute as well. Open approvals carry pending_org, which
// puts them in the sparse pending index the pending list queries.

func approvalKey(org, approvalID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrApprovalKey: avS(org + "#" + approvalID)}
}

func approvalNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "approval %s not found", id)
}

// approvalItem returns the item that stores a at the given revision.
func approvalItem(a *cardflow.Approval, revision int64) (map[string]types.AttributeValue, error) {
	rec := *a
	rec.Revision = revision
	body, err := encode("approval", &rec)
	if err != nil {
		return nil, err
	}
	item := approvalKey(a.OrganizationID, a.ApprovalID)
	item[attrOrg] = avS(a.OrganizationID)
	item[attrApprovalID] = avS(a.ApprovalID)
	item[attrWorkflow] = avS(a.WorkflowID)
	item[attrCreatedOn] = avN(a.CreatedOn)
	item[attrRevision] = avN(revision)
	item[attrRecord] = body
	if a.Open() {
		item[attrPendingOrg] = avS(a.OrganizationID)
	}
	// A string set cannot be empty, nor hold one string twice.
	seen := map[string]bool{}
	var approvers []string
	for _, p := range a.Approvers {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" && !seen[p] {
			seen[p] = true
			approvers = append(approvers, p)
		}
	}
	if len(approvers) > 0 {
		item[attrApprovers] = &types.AttributeValueMemberSS{Value: approvers}
	}
	return item, nil
}

func loadApproval(item map[string]types.AttributeValue) (*cardflow.Approval, error) {
	return decode[cardflow.Approval](item)
}

func (s *Store) CreateApproval(ctx context.Context, a *cardflow.Approval) (err error) {
	defer s.translate("CreateApproval", &err)
	if a.OrganizationID == "" || a.ApprovalID == "" {
		return cardflow.Errorf(cardflow.EINVALID, "an approval needs an organization and an id")
	}
	item, err := approvalItem(a, 1)
	if err != nil {
		return err
	}
	err = s.put(ctx, TableApprovals, item, expression.AttributeNotExists(expression.Name(attrApprovalKey)))
	if conditionFailed(err) {
		return cardflow.Errorf(cardflow.ECONFLICT, "approval %s exists already", a.ApprovalID)
	}
	if err == nil {
		a.Revision = 1
	}
	return err
}

func (s *Store) GetApproval(ctx context.Context, org, approvalID string) (_ *cardflow.Approval, err error) {
	defer s.translate("GetApproval", &err)
	if org == "" || approvalID == "" {
		return nil, approvalNotFound(approvalID)
	}
	item, err := s.get(ctx, TableApprovals, approvalKey(org, approvalID))
	if err != nil {
		return nil, err
	}
	if !owned(item, org) {
		return nil, approvalNotFound(approvalID)
	}
	return loadApproval(item)
}

func (s *Store) PutApproval(ctx context.Context, a *cardflow.Approval) (err error) {
	defer s.translate("PutApproval", &err)
	if a.OrganizationID == "" || a.ApprovalID == "" {
		return approvalNotFound(a.ApprovalID)
	}
	item, err := approvalItem(a, a.Revision+1)
	if err != nil {
		return err
	}
	err = s.putRevision(ctx, TableApprovals, item, a.OrganizationID, a.Revision, approvalNotFound(a.ApprovalID),
		cardflow.Errorf(cardflow.ECONFLICT, "approval %s changed meanwhile", a.ApprovalID))
	if err == nil {
		a.Revision++
	}
	return err
}

// ListPendingApprovals queries the organization's partition of the
// pending index, newest first; the filter is a FilterExpression, and
// queryPage reads on until the page is full.
func (s *Store) ListPendingApprovals(ctx context.Context, org string, f cardflow.ApprovalFilter, opt cardflow.ListOptions[cardflow.ApprovalKey]) (_ cardflow.Page[*cardflow.Approval, cardflow.ApprovalKey], err error) {
	defer s.translate("ListPendingApprovals", &err)
	page := cardflow.Page[*cardflow.Approval, cardflow.ApprovalKey]{Items: []*cardflow.Approval{}}
	if org == "" || (opt.After != nil && opt.After.ApprovalID == "") {
		return page, nil
	}
	var conds []expression.ConditionBuilder
	if f.Approver != "" {
		conds = append(conds, expression.Contains(expression.Name(attrApprovers), strings.ToLower(strings.TrimSpace(f.Approver))))
	}
	if f.WorkflowID != "" {
		conds = append(conds, expression.Name(attrWorkflow).Equal(expression.Value(f.WorkflowID)))
	}
	if f.CreatedBefore > 0 {
		conds = append(conds, expression.Name(attrCreatedOn).LessThan(expression.Value(f.CreatedBefore)))
	}
	var filter *expression.ConditionBuilder
	switch len(conds) {
	case 0:
	case 1:
		filter = &conds[0]
	default:
		c := expression.And(conds[0], conds[1], conds[2:]...)
		filter = &c
	}
	in, err := s.query(TableApprovals, indexPending, expression.Key(attrPendingOrg).Equal(expression.Value(org)), filter)
	if err != nil {
		return page, err
	}
	if opt.After != nil {
		// An index's start key holds the table's key too.
		in.ExclusiveStartKey = approvalKey(org, opt.After.ApprovalID)
		in.ExclusiveStartKey[attrPendingOrg] = avS(org)
		in.ExclusiveStartKey[attrApprovalID] = avS(opt.After.ApprovalID)
	}
	return queryPage(ctx, s, in, opt.Limit, loadApproval, func(a *cardflow.Approval) cardflow.ApprovalKey {
		return cardflow.ApprovalKey{OrganizationID: a.OrganizationID, ApprovalID: a.ApprovalID}
	})
}
