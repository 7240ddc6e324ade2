package httpapi

import (
	"net/http"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// maxEpochMillis bounds the times of a bulk operation: the year 9999.
const maxEpochMillis = 253_402_300_799_999

// maxQueryMillis bounds the times of a search's query string: 14 digits
// (the year 5138), a bound openapi.yaml's pattern states exactly.
const maxQueryMillis = 99_999_999_999_999

// executionFilter reads the filters of a search. A filter given empty is
// refused, not read as absent: it is a caller's mistake.
func (q *query) executionFilter() cardflow.ExecutionFilter {
	f := cardflow.ExecutionFilter{
		Status:      q.oneOf("status", "", cardflow.ExecStatuses...),
		WorkflowID:  q.optionalID("workflow_id"),
		ProcessID:   q.str("process_id", false),
		TriggerType: q.oneOf("trigger_type", "", cardflow.TriggerTypes...),
	}
	if q.values.Has("process_id") && f.ProcessID == "" {
		q.fail("query parameter process_id must not be empty when given")
	}
	f.CreatedAfter, _ = q.count("created_after", "a time in epoch milliseconds", maxQueryMillis)
	before, given := q.count("created_before", "a time in epoch milliseconds", maxQueryMillis)
	if given && before == 0 {
		q.fail("query parameter created_before must be after 0")
	}
	f.CreatedBefore = before
	if q.err == nil {
		if err := f.Validate(); err != nil {
			q.fail("%s", cardflow.ErrorMessage(err))
		}
	}
	return f
}

// searchPageKey reads the page key of a search: the three fields of
// lastKey, together, or none.
func (q *query) searchPageKey() *cardflow.SearchKey {
	wid, eid := q.pageID("last_workflow_id"), q.pageID("last_workflow_execution_id")
	created, given := q.count("last_created_on", "a created_on as lastKey gave it", maxQueryMillis)
	if q.err != nil {
		return nil
	}
	switch {
	case wid == "" && eid == "" && !given:
		return nil
	case wid == "" || eid == "" || !given:
		q.fail("the page key needs last_workflow_id, last_workflow_execution_id and last_created_on together, as lastKey gave them")
		return nil
	}
	return &cardflow.SearchKey{WorkflowID: wid, WorkflowExecutionID: eid, CreatedOn: created}
}

func (s *Server) searchExecutions(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	f := q.executionFilter()
	opt := cardflow.ListOptions[cardflow.SearchKey]{Limit: q.limit(), After: q.searchPageKey()}
	if err := q.done(); err != nil {
		return err
	}
	page, err := s.svc.SearchExecutions(r.Context(), f, opt)
	if err != nil {
		return err
	}
	return okList(w, summarize(page.Items, historyEvents), page.LastKey)
}
