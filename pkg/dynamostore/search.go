package dynamostore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// filteredReadFactor is how many index entries per item of the page a
// search reads when its index does not hold every filter: enough for full
// pages where one entry in ten matches, while a page still costs one Query
// of small index entries (keys and a few short attributes).
const filteredReadFactor = 10

// createdKey is the sort key of the search indexes.
func createdKey(created int64, id string) string {
	return fmt.Sprintf("%015d#%s", created, id)
}

// searchPartition is the partition of org in a search index.
func searchPartition(org string, values []string) string {
	return strings.Join(append([]string{org}, values...), "#")
}

// setSearchAttributes adds e's search attributes to its head item. Every
// put writes them, so an execution written before searches existed joins
// them at its next write.
func setSearchAttributes(item map[string]types.AttributeValue, e *cardflow.Execution) {
	item[attrCreatedKey] = avS(createdKey(e.CreatedOn, e.WorkflowExecutionID))
	for _, idx := range cardflow.SearchIndexes {
		si := searchIndexes[idx]
		if si.partition == attrOrg {
			continue
		}
		if values, ok := cardflow.SearchValues(e, idx); ok {
			item[si.partition] = avS(searchPartition(e.OrganizationID, values))
		}
	}
}

// residualFilter is what a search on idx still has to check of f: the
// filters its partition does not hold, on attributes the index projects.
func residualFilter(org string, f cardflow.ExecutionFilter, idx cardflow.SearchIndex) *expression.ConditionBuilder {
	held := map[string]bool{}
	switch idx {
	case cardflow.SearchByProcess:
		held[attrSearchProcess] = true
	case cardflow.SearchByWorkflowStatus:
		held[attrSearchWorkflow], held[attrSearchStatus] = true, true
	default:
		held[searchIndexes[idx].partition] = true
	}
	var conds []expression.ConditionBuilder
	for _, c := range []struct{ attr, value string }{
		{attrSearchWorkflow, f.WorkflowID}, {attrSearchStatus, f.Status}, {attrSearchTrigger, f.TriggerType},
	} {
		if c.value != "" && !held[c.attr] {
			conds = append(conds, expression.Name(c.attr).Equal(expression.Value(searchPartition(org, []string{c.value}))))
		}
	}
	switch len(conds) {
	case 0:
		return nil
	case 1:
		return &conds[0]
	}
	all := expression.And(conds[0], conds[1], conds[2:]...)
	return &all
}

// searchKeyOf reads the page key from an index entry or a
// LastEvaluatedKey: both hold the table's key and the sort key.
func searchKeyOf(item map[string]types.AttributeValue) (cardflow.SearchKey, error) {
	created, _, _ := strings.Cut(stringAttr(item, attrCreatedKey), "#")
	ms, err := strconv.ParseInt(created, 10, 64)
	if err != nil {
		return cardflow.SearchKey{}, fmt.Errorf("dynamostore: search entry has sort key %q", stringAttr(item, attrCreatedKey))
	}
	return cardflow.SearchKey{WorkflowID: stringAttr(item, attrWorkflow), WorkflowExecutionID: stringAttr(item, attrExecution), CreatedOn: ms}, nil
}

// SearchExecutions is one Query of the search index f selects, over the
// time range, and one BatchGetItem of the heads it found. An index that
// holds every filter reads limit+1 entries; one that does not filters
// what it reads (filteredReadFactor), so its page may be short, with a
// LastKey where the Query stopped. The heads are read consistently and
// checked against f again: an index lags its table a little, and an
// execution that changed meanwhile is left out rather than shown under a
// status it no longer has.
func (s *Store) SearchExecutions(ctx context.Context, org string, f cardflow.ExecutionFilter, opt cardflow.ListOptions[cardflow.SearchKey]) (_ cardflow.Page[*cardflow.Execution, cardflow.SearchKey], err error) {
	defer s.translate("SearchExecutions", &err)
	page := cardflow.Page[*cardflow.Execution, cardflow.SearchKey]{Items: []*cardflow.Execution{}}
	if org == "" {
		return page, nil
	}
	idx, exact := f.Index()
	si := searchIndexes[idx]
	partition := org
	if si.partition != attrOrg {
		partition = searchPartition(org, f.FilterValues(idx))
	}
	// "~" sorts after every id, so it closes a millisecond's range.
	lower, upper := createdKey(f.CreatedAfter, ""), "~"
	if f.CreatedBefore > 0 {
		upper = createdKey(f.CreatedBefore-1, "~")
	}
	var start map[string]types.AttributeValue
	if a := opt.After; a != nil {
		at := createdKey(a.CreatedOn, a.WorkflowExecutionID)
		if at <= lower {
			return page, nil
		}
		if at <= upper {
			start = executionKey(a.WorkflowID, a.WorkflowExecutionID)
			start[si.partition], start[attrCreatedKey] = avS(partition), avS(at)
		}
	}
	key := expression.Key(si.partition).Equal(expression.Value(partition))
	switch {
	case f.CreatedAfter > 0 && f.CreatedBefore > 0:
		key = key.And(expression.Key(attrCreatedKey).Between(expression.Value(lower), expression.Value(upper)))
	case f.CreatedAfter > 0:
		key = key.And(expression.Key(attrCreatedKey).GreaterThanEqual(expression.Value(lower)))
	case f.CreatedBefore > 0:
		key = key.And(expression.Key(attrCreatedKey).LessThanEqual(expression.Value(upper)))
	}
	in, err := s.query(TableExecutions, si.name, key, residualFilter(org, f, idx))
	if err != nil {
		return page, err
	}
	limit := cardflow.PageSize(opt.Limit)
	in.ExclusiveStartKey = start
	in.Limit = aws.Int32(int32(limit + 1))
	if !exact {
		in.Limit = aws.Int32(int32(filteredReadFactor * (limit + 1)))
	}
	out, err := s.client.Query(ctx, in)
	if err != nil {
		return page, err
	}
	found := out.Items
	var last map[string]types.AttributeValue
	switch {
	case len(found) > limit:
		found = found[:limit]
		last = found[limit-1]
	case out.LastEvaluatedKey != nil:
		last = out.LastEvaluatedKey
	}
	if last != nil {
		k, err := searchKeyOf(last)
		if err != nil {
			return page, err
		}
		page.LastKey = &k
	}
	heads, err := s.readHeads(ctx, found)
	if err != nil {
		return page, err
	}
	for _, entry := range found {
		item := heads[partsPartition(stringAttr(entry, attrWorkflow), stringAttr(entry, attrExecution))]
		if item == nil || !owned(item, org) {
			continue
		}
		e, err := loadExecution(item)
		if err != nil {
			return page, err
		}
		if f.Matches(e) {
			page.Items = append(page.Items, e)
		}
	}
	return page, nil
}

// readHeads reads the heads of the executions the entries name, in one
// BatchGetItem (and one more for any DynamoDB leaves unprocessed), by
// workflow_id#execution_id.
func (s *Store) readHeads(ctx context.Context, entries []map[string]types.AttributeValue) (map[string]map[string]types.AttributeValue, error) {
	heads := make(map[string]map[string]types.AttributeValue, len(entries))
	if len(entries) == 0 {
		return heads, nil
	}
	keys := make([]map[string]types.AttributeValue, len(entries))
	for i, e := range entries {
		keys[i] = executionKey(stringAttr(e, attrWorkflow), stringAttr(e, attrExecution))
	}
	table := *s.table(TableExecutions)
	req := map[string]types.KeysAndAttributes{table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for attempt := 1; len(req) > 0; attempt++ {
		if attempt > maxAttempts {
			return nil, cardflow.Errorf(cardflow.EUNAVAILABLE, "the store kept some executions of the page unread; try again")
		}
		out, err := s.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, err
		}
		for _, item := range out.Responses[table] {
			heads[partsPartition(stringAttr(item, attrWorkflow), stringAttr(item, attrExecution))] = item
		}
		req = out.UnprocessedKeys
	}
	return heads, nil
}
