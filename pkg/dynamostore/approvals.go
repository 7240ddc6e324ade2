package dynamostore

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
	rec.Revision, rec.Overdue = revision, false
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
	if a.Due > 0 {
		item[attrDueOn] = avN(a.Due)
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
	if !owned(item, org) || stringAttr(item, attrApprovalID) == "" {
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
	if d, ok := cardflow.ApprovalStatsOf(a); ok {
		decided, err := s.decideApproval(ctx, a, item, d)
		if decided {
			a.Revision++
		}
		if decided || err != nil {
			return err
		}
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
	if f.Overdue != nil {
		due := expression.Name(attrDueOn)
		if *f.Overdue {
			conds = append(conds, due.AttributeExists().And(due.LessThanEqual(expression.Value(f.Now))))
		} else {
			conds = append(conds, due.AttributeNotExists().Or(due.GreaterThan(expression.Value(f.Now))))
		}
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

// Approval statistics live in the approvals table too, one item per
// organization, workflow ("" for all) and day, keyed
// "organization_id#stats#workflow_id#day"; no approval id starts with
// "stats". Their counts are top-level number attributes, which the
// deciding transaction raises with ADD, so concurrent decisions never
// overwrite each other:
//
//	n|<status>              approvals that ended so
//	h|<bucket>              cycle times, by histogram bucket
//	a|<field>|<approver>    answered, approved, rejected and h<bucket>
//	                        of one approver (in lower case)
const (
	attrStatsDay    = "stats_day"
	statsCount      = "n|"
	statsBucket     = "h|"
	statsApprover   = "a|"
	statsAnswered   = "answered"
	statsApproved   = "approved"
	statsRejected   = "rejected"
	statsApproverHx = "h"
)

func approvalStatsKey(org, workflowID, day string) map[string]types.AttributeValue {
	return approvalKey(org, "stats#"+workflowID+"#"+day)
}

// approvalStatsOps are the updates that add d to the aggregates of its
// day, of the organization and of the workflow.
func (s *Store) approvalStatsOps(org, workflowID string, d cardflow.ApprovalDayStats) []types.TransactWriteItem {
	names := map[string]string{"#org": attrOrg, "#day": attrStatsDay}
	values := map[string]types.AttributeValue{":org": avS(org), ":day": avS(d.Day)}
	var adds []string
	add := func(name string, n int64) {
		if n == 0 {
			return
		}
		i := strconv.Itoa(len(adds))
		names["#a"+i], values[":a"+i] = name, avN(n)
		adds = append(adds, "#a"+i+" :a"+i)
	}
	for _, status := range slices.Sorted(maps.Keys(d.Counts)) {
		add(statsCount+status, d.Counts[status])
	}
	for _, b := range slices.Sorted(maps.Keys(d.Cycle)) {
		add(statsBucket+strconv.Itoa(b), d.Cycle[b])
	}
	for _, who := range slices.Sorted(maps.Keys(d.Approvers)) {
		a := d.Approvers[who]
		add(statsApprover+statsAnswered+"|"+who, a.Answered)
		add(statsApprover+statsApproved+"|"+who, a.Approved)
		add(statsApprover+statsRejected+"|"+who, a.Rejected)
		for _, b := range slices.Sorted(maps.Keys(a.Cycle)) {
			add(statsApprover+statsApproverHx+strconv.Itoa(b)+"|"+who, a.Cycle[b])
		}
	}
	update := "SET #org = :org, #day = :day"
	if len(adds) > 0 {
		update += " ADD " + strings.Join(adds, ", ")
	}
	var ops []types.TransactWriteItem
	for _, wf := range []string{"", workflowID} {
		ops = append(ops, types.TransactWriteItem{Update: &types.Update{
			TableName: s.table(TableApprovals), Key: approvalStatsKey(org, wf, d.Day), UpdateExpression: aws.String(update),
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		}})
	}
	return ops
}

// decideApproval writes item, the approval a at its next revision, with
// the statistics it adds, if the stored one is at a.Revision and still
// PENDING. It reports false when the stored one is at a.Revision but no
// longer pending, which only a plain put then changes.
func (s *Store) decideApproval(ctx context.Context, a *cardflow.Approval, item map[string]types.AttributeValue, d cardflow.ApprovalDayStats) (bool, error) {
	cond := expression.Name(attrRevision).Equal(expression.Value(a.Revision)).
		And(expression.Name(attrOrg).Equal(expression.Value(a.OrganizationID))).
		And(expression.AttributeExists(expression.Name(attrPendingOrg)))
	put, err := s.putOp(TableApprovals, item, cond)
	if err != nil {
		return false, err
	}
	put.Put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	err = s.transact(ctx, append([]types.TransactWriteItem{put}, s.approvalStatsOps(a.OrganizationID, a.WorkflowID, d)...)...)
	if i, stored := failedCondition(err); i == 0 {
		switch rev, _ := numAttr[int64](stored, attrRevision); {
		case !owned(stored, a.OrganizationID):
			return false, approvalNotFound(a.ApprovalID)
		case rev != a.Revision:
			return false, cardflow.Errorf(cardflow.ECONFLICT, "approval %s changed meanwhile", a.ApprovalID)
		}
		return false, nil
	}
	return err == nil, err
}

func (s *Store) ApprovalStats(ctx context.Context, org, workflowID string, days []string) (_ []cardflow.ApprovalDayStats, err error) {
	defer s.translate("ApprovalStats", &err)
	if len(days) > cardflow.MaxStatsDays {
		return nil, cardflow.Errorf(cardflow.EINVALID, "statistics cover at most %d days, not %d", cardflow.MaxStatsDays, len(days))
	}
	out := []cardflow.ApprovalDayStats{}
	if org == "" {
		return out, nil
	}
	found := map[string]cardflow.ApprovalDayStats{}
	table := *s.table(TableApprovals)
	for chunk := range slices.Chunk(days, 100) {
		keys := make([]map[string]types.AttributeValue, len(chunk))
		for i, day := range chunk {
			keys[i] = approvalStatsKey(org, workflowID, day)
		}
		req := map[string]types.KeysAndAttributes{table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		for len(req) > 0 {
			res, err := s.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, err
			}
			for _, item := range res.Responses[table] {
				if !owned(item, org) {
					continue
				}
				d, err := loadApprovalStats(item)
				if err != nil {
					return nil, err
				}
				found[d.Day] = d
			}
			req = res.UnprocessedKeys
		}
	}
	for _, day := range days {
		if d, ok := found[day]; ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// loadApprovalStats reads a statistics item back into its aggregate.
func loadApprovalStats(item map[string]types.AttributeValue) (cardflow.ApprovalDayStats, error) {
	d := cardflow.ApprovalDayStats{Day: stringAttr(item, attrStatsDay), Counts: map[string]int64{},
		Cycle: cardflow.Histogram{}, Approvers: map[string]*cardflow.ApproverDayStats{}}
	for name := range item {
		n, err := numAttr[int64](item, name)
		if err != nil {
			continue // a string attribute: the key, the organization, the day
		}
		switch {
		case strings.HasPrefix(name, statsCount):
			d.Counts[strings.TrimPrefix(name, statsCount)] = n
		case strings.HasPrefix(name, statsBucket):
			if b, err := strconv.Atoi(strings.TrimPrefix(name, statsBucket)); err == nil {
				d.Cycle.Add(b, n)
			}
		case strings.HasPrefix(name, statsApprover):
			field, who, ok := strings.Cut(strings.TrimPrefix(name, statsApprover), "|")
			if !ok {
				continue
			}
			a := d.Approvers[who]
			if a == nil {
				a = &cardflow.ApproverDayStats{Cycle: cardflow.Histogram{}}
				d.Approvers[who] = a
			}
			switch field {
			case statsAnswered:
				a.Answered = n
			case statsApproved:
				a.Approved = n
			case statsRejected:
				a.Rejected = n
			default:
				if b, err := strconv.Atoi(strings.TrimPrefix(field, statsApproverHx)); err == nil {
					a.Cycle.Add(b, n)
				}
			}
		}
	}
	return d, nil
}
