package cardflow

import (
	"context"
	"slices"
)

// ExecutionFilter selects the executions of a search. Empty fields match
// every execution; set fields must all match.
type ExecutionFilter struct {
	Status      string `json:"status,omitempty"`
	WorkflowID  string `json:"workflow_id,omitempty"`
	ProcessID   string `json:"process_id,omitempty"`
	TriggerType string `json:"trigger_type,omitempty"`
	// CreatedAfter and CreatedBefore bound created_on (epoch ms) as a
	// half-open range, CreatedAfter <= created_on < CreatedBefore, so that
	// adjacent ranges never share an execution. 0 leaves a side open.
	CreatedAfter  int64 `json:"created_after,omitempty"`
	CreatedBefore int64 `json:"created_before,omitempty"`
}

// ExecStatuses are the statuses an execution can have, the values a
// search's status takes.
var ExecStatuses = []string{ExecRunning, ExecWaiting, ExecSucceeded, ExecFailed, ExecCancelled, ExecTimedOut}

// TriggerTypes are the trigger types an execution can have.
var TriggerTypes = []string{TriggerRequest, TriggerSchedule}

// Validate refuses a filter no execution can match by mistake: an unknown
// status or trigger type, or a negative time. An empty time range is no
// mistake, only a range with nothing in it (see Empty).
func (f ExecutionFilter) Validate() error {
	switch {
	case f.Status != "" && !slices.Contains(ExecStatuses, f.Status):
		return Errorf(EINVALID, "status must be one of %v, got %q", ExecStatuses, f.Status)
	case f.TriggerType != "" && !slices.Contains(TriggerTypes, f.TriggerType):
		return Errorf(EINVALID, "trigger_type must be one of %v, got %q", TriggerTypes, f.TriggerType)
	case f.CreatedAfter < 0 || f.CreatedBefore < 0:
		return Errorf(EINVALID, "created_after and created_before are epoch milliseconds, not negative")
	}
	return nil
}

// Empty reports whether the time range holds no time at all, created_after
// not before created_before: no execution matches, and stores are not asked.
func (f ExecutionFilter) Empty() bool {
	return f.CreatedBefore != 0 && f.CreatedAfter >= f.CreatedBefore
}

// Matches reports whether e is one the filter selects.
func (f ExecutionFilter) Matches(e *Execution) bool {
	return (f.Status == "" || e.Status == f.Status) &&
		(f.WorkflowID == "" || e.WorkflowID == f.WorkflowID) &&
		(f.ProcessID == "" || e.State.ProcessID == f.ProcessID) &&
		(f.TriggerType == "" || e.WorkflowTriggerType == f.TriggerType) &&
		e.CreatedOn >= f.CreatedAfter &&
		(f.CreatedBefore == 0 || e.CreatedOn < f.CreatedBefore)
}

// SearchKey is the page key of execution searches: the last execution of
// the page and when it was created, the order of a search. Its fields
// are named apart from the filters (workflow_id is one), since a client
// sends both back as query parameters.
type SearchKey struct {
	WorkflowID          string `json:"last_workflow_id"`
	WorkflowExecutionID string `json:"last_workflow_execution_id"`
	CreatedOn           int64  `json:"last_created_on"`
}

// SearchKeyOf returns the page key that ends a page at e.
func SearchKeyOf(e *Execution) SearchKey {
	return SearchKey{WorkflowID: e.WorkflowID, WorkflowExecutionID: e.WorkflowExecutionID, CreatedOn: e.CreatedOn}
}

// SearchIndex names the index a search walks: the one keyed by the most
// selective of the filters set. Adapters keep one index per name, each
// ordered by created_on then execution id, and apply the filters the
// index does not hold to what it yields.
type SearchIndex string

// Search indexes, most selective first.
const (
	SearchByProcess        SearchIndex = "process"
	SearchByWorkflowStatus SearchIndex = "workflow_status"
	SearchByWorkflow       SearchIndex = "workflow"
	SearchByStatus         SearchIndex = "status"
	SearchByTrigger        SearchIndex = "trigger"
	SearchByCreated        SearchIndex = "created"
)

// SearchIndexes lists every search index.
var SearchIndexes = []SearchIndex{SearchByProcess, SearchByWorkflowStatus, SearchByWorkflow, SearchByStatus, SearchByTrigger, SearchByCreated}

// Index returns the index that serves the filter, and whether it holds
// every filter set (exact), so no item it yields is dropped.
func (f ExecutionFilter) Index() (idx SearchIndex, exact bool) {
	switch {
	case f.ProcessID != "":
		return SearchByProcess, f.WorkflowID == "" && f.Status == "" && f.TriggerType == ""
	case f.WorkflowID != "" && f.Status != "":
		return SearchByWorkflowStatus, f.TriggerType == ""
	case f.WorkflowID != "":
		return SearchByWorkflow, f.TriggerType == ""
	case f.Status != "":
		return SearchByStatus, f.TriggerType == ""
	case f.TriggerType != "":
		return SearchByTrigger, true
	}
	return SearchByCreated, true
}

// SearchValues returns, per index, the values that place e in it (beside
// its organization); ok is false for an index e has no place in (an
// execution without a process id).
func SearchValues(e *Execution, idx SearchIndex) (values []string, ok bool) {
	switch idx {
	case SearchByProcess:
		return []string{e.State.ProcessID}, e.State.ProcessID != ""
	case SearchByWorkflowStatus:
		return []string{e.WorkflowID, e.Status}, true
	case SearchByWorkflow:
		return []string{e.WorkflowID}, true
	case SearchByStatus:
		return []string{e.Status}, true
	case SearchByTrigger:
		return []string{e.WorkflowTriggerType}, true
	}
	return nil, true
}

// FilterValues returns the values of the filter that select a partition
// of idx: what SearchValues gives for the executions the filter matches.
func (f ExecutionFilter) FilterValues(idx SearchIndex) []string {
	switch idx {
	case SearchByProcess:
		return []string{f.ProcessID}
	case SearchByWorkflowStatus:
		return []string{f.WorkflowID, f.Status}
	case SearchByWorkflow:
		return []string{f.WorkflowID}
	case SearchByStatus:
		return []string{f.Status}
	case SearchByTrigger:
		return []string{f.TriggerType}
	}
	return nil
}

// SearchStore finds executions by their status, workflow, process id,
// trigger type and creation time. Adapters of Store implement it; the
// contract suite covers it.
type SearchStore interface {
	// SearchExecutions returns one page of the executions of org that f
	// selects, newest first (created_on, then execution id, both
	// descending). LastKey is set when more may follow. A page is full
	// unless it is the last, except where f.Index is not exact: an adapter
	// may then return fewer items than the limit, or none, with LastKey
	// set (so may one whose executions change while it reads), and the
	// following pages still yield every match once and in order. A SearchKey positions the walk only; it need not name a
	// matching execution.
	SearchExecutions(ctx context.Context, org string, f ExecutionFilter, opt ListOptions[SearchKey]) (Page[*Execution, SearchKey], error)
}
