package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// An organization's delegations are one item of the approvals table, keyed
// "organization_id#delegations" (no approval id is "delegations"): opening
// an approval reads them with one GetItem, and the functions that open or
// answer approvals already have that table. It carries no pending_org, so
// no pending list sees it.
func delegationsKey(org string) map[string]types.AttributeValue {
	return approvalKey(org, "delegations")
}

func (s *Store) GetDelegations(ctx context.Context, org string) (_ *cardflow.Delegations, err error) {
	defer s.translate("GetDelegations", &err)
	none := &cardflow.Delegations{OrganizationID: org, Items: []cardflow.Delegation{}}
	if org == "" {
		return none, nil
	}
	item, err := s.get(ctx, TableApprovals, delegationsKey(org))
	if err != nil {
		return nil, err
	}
	if item == nil || !owned(item, org) {
		return none, nil
	}
	return decode[cardflow.Delegations](item)
}

func (s *Store) PutDelegations(ctx context.Context, d *cardflow.Delegations) (err error) {
	defer s.translate("PutDelegations", &err)
	if d.OrganizationID == "" {
		return cardflow.Errorf(cardflow.EINVALID, "delegations need an organization")
	}
	rec := *d
	rec.Revision++
	body, err := encode("delegations", &rec)
	if err != nil {
		return err
	}
	item := delegationsKey(d.OrganizationID)
	item[attrOrg] = avS(d.OrganizationID)
	item[attrRevision] = avN(rec.Revision)
	item[attrRecord] = body
	changed := cardflow.Errorf(cardflow.ECONFLICT, "the delegations of %s changed meanwhile", d.OrganizationID)
	if d.Revision == 0 {
		err = s.put(ctx, TableApprovals, item, expression.AttributeNotExists(expression.Name(attrApprovalKey)))
		if conditionFailed(err) {
			return changed
		}
	} else {
		err = s.putRevision(ctx, TableApprovals, item, d.OrganizationID, d.Revision, changed, changed)
	}
	if err == nil {
		d.Revision = rec.Revision
	}
	return err
}
