package storetest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func execution(org, workflowID string) *cardflow.Execution {
	return &cardflow.Execution{
		WorkflowExecutionID:  newID(),
		WorkflowID:           workflowID,
		WorkflowVersion:      1,
		OrganizationID:       org,
		WorkspaceID:          "ws-1",
		WorkflowCurrentState: "approve",
		WorkflowTriggerType:  cardflow.TriggerRequest,
		TriggeredBy:          "ann@example.com",
		Status:               cardflow.ExecWaiting,
		WorkflowEventLog: cardflow.EventLog{
			Events: []cardflow.Event{{At: 1700000000000, Type: "StepStarted", StepID: "approve", Step: "Ask approver"}},
			Total:  1,
		},
		CondensedLogs: map[string]cardflow.StepLog{
			"lookup": {Input: map[string]any{"order_id": "4500001234"}, Output: map[string]any{"amount": 1200.5}, Status: "SUCCEEDED"},
		},
		WorkflowInputPayload: map[string]any{"order_id": "4500001234"},
		WorkflowDetails:      cardflow.WorkflowDetails{WorkflowName: "purchase approval"},
		CreatedOn:            1700000000000,
		ModifiedOn:           1700000000000,
	}
}

// createExecutions creates n executions, spread round-robin over the given
// workflows, and returns their ids in list order: descending, which is
// newest first to the millisecond (ids of one millisecond are in no
// particular order).
func createExecutions(t *testing.T, s cardflow.Store, org string, n int, workflowIDs ...string) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		e := execution(org, workflowIDs[i%len(workflowIDs)])
		mustOK(t, "create execution", s.CreateExecution(t.Context(), e))
		ids[i] = e.WorkflowExecutionID
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids
}

func executionIDs(items []*cardflow.Execution) []string {
	ids := make([]string, len(items))
	for i, e := range items {
		ids[i] = e.WorkflowExecutionID
	}
	return ids
}

func executionKey(e *cardflow.Execution) cardflow.ExecutionKey {
	return cardflow.ExecutionKey{WorkflowID: e.WorkflowID, WorkflowExecutionID: e.WorkflowExecutionID}
}

func testExecutions(t *testing.T, e env) {
	t.Run("CreateGetPut", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		got, err := s.GetExecution(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get", err)
		sameJSON(t, "get after create", got, ex)

		dup := execution(org, wf)
		dup.WorkflowExecutionID, dup.Status = ex.WorkflowExecutionID, cardflow.ExecFailed
		wantCode(t, "create with a used id", s.CreateExecution(t.Context(), dup), cardflow.ECONFLICT)
		got, err = s.GetExecution(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get after conflict", err)
		sameJSON(t, "get after conflict", got, ex)

		by := "bob"
		ex.Status, ex.WorkflowCurrentState, ex.ModifiedBy, ex.ModifiedOn = cardflow.ExecSucceeded, "end", &by, 1700000005000
		ex.WorkflowOutputPayload = map[string]any{"approved": true}
		mustOK(t, "put", s.PutExecution(t.Context(), ex))
		got, err = s.GetExecution(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get after put", err)
		sameJSON(t, "get after put", got, ex)
	})

	t.Run("NotFound", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		other := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		for _, tc := range []struct{ name, workflowID, executionID string }{
			{"unknown execution", wf, newID()},
			{"unknown workflow", newID(), ex.WorkflowExecutionID},
			{"another workflow of the organization", other, ex.WorkflowExecutionID},
		} {
			_, err := s.GetExecution(t.Context(), org, tc.workflowID, tc.executionID)
			wantCode(t, "get "+tc.name, err, cardflow.ENOTFOUND)
		}
		wantCode(t, "put unknown execution", s.PutExecution(t.Context(), execution(org, wf)), cardflow.ENOTFOUND)
		_, err := s.ListWorkflowExecutions(t.Context(), org, newID(), cardflow.ListOptions[cardflow.ExecutionKey]{})
		wantCode(t, "list executions of an unknown workflow", err, cardflow.ENOTFOUND)
	})

	t.Run("ListWorkflowExecutions", func(t *testing.T) {
		for _, tc := range pagings {
			t.Run(tc.name, func(t *testing.T) {
				s := e.store(t)
				org := newOrg()
				wf, other := workflows.create(t, s, org, 1), workflows.create(t, s, org, 1)
				want := createExecutions(t, s, org, tc.total, wf)
				createExecutions(t, s, org, 2, other)
				list := func(opt cardflow.ListOptions[cardflow.ExecutionKey]) (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
					return s.ListWorkflowExecutions(t.Context(), org, wf, opt)
				}
				checkExecutionList(t, tc.total, tc.limit, list, want)
			})
		}
	})

	t.Run("ListExecutions", func(t *testing.T) {
		for _, tc := range pagings {
			t.Run(tc.name, func(t *testing.T) {
				s := e.store(t)
				org := newOrg()
				wfs := []string{workflows.create(t, s, org, 1), workflows.create(t, s, org, 1), workflows.create(t, s, org, 1)}
				want := createExecutions(t, s, org, tc.total, wfs...)
				foreign := newOrg()
				createExecutions(t, s, foreign, 2, workflows.create(t, s, foreign, 1))
				list := func(opt cardflow.ListOptions[cardflow.ExecutionKey]) (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
					return s.ListExecutions(t.Context(), org, opt)
				}
				checkExecutionList(t, tc.total, tc.limit, list, want)
			})
		}
	})

	t.Run("ExecutionStatus", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		ex.Status, ex.ModifiedOn = cardflow.ExecSucceeded, ex.ModifiedOn+5
		mustOK(t, "put", s.PutExecution(t.Context(), ex))
		status, modified, err := s.GetExecutionStatus(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get status", err)
		if status != ex.Status || modified != ex.ModifiedOn {
			t.Errorf("got %s %d, want %s %d", status, modified, ex.Status, ex.ModifiedOn)
		}
		_, _, err = s.GetExecutionStatus(t.Context(), newOrg(), wf, ex.WorkflowExecutionID)
		wantCode(t, "status of another organization's execution", err, cardflow.ENOTFOUND)
		_, _, err = s.GetExecutionStatus(t.Context(), org, wf, newID())
		wantCode(t, "status of a missing execution", err, cardflow.ENOTFOUND)
	})

	t.Run("ExecutionRevision", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		for range 2 {
			rev, err := s.GetExecutionRevision(t.Context(), org, wf, ex.WorkflowExecutionID)
			mustOK(t, "get revision", err)
			if rev != ex.Revision {
				t.Errorf("got revision %d, want %d", rev, ex.Revision)
			}
			ex.ModifiedOn++
			mustOK(t, "put", s.PutExecution(t.Context(), ex))
		}
		_, err := s.GetExecutionRevision(t.Context(), newOrg(), wf, ex.WorkflowExecutionID)
		wantCode(t, "revision of another organization's execution", err, cardflow.ENOTFOUND)
		_, err = s.GetExecutionRevision(t.Context(), org, wf, newID())
		wantCode(t, "revision of a missing execution", err, cardflow.ENOTFOUND)
	})

	t.Run("ExecutionHead", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		ex.WorkflowCurrentState, ex.WorkflowInputPayload = "Approve", map[string]any{"po": "4500001234"}
		ex.State.Outputs = map[string]any{"start": map[string]any{"ok": true}}
		ex.CondensedLogs = map[string]cardflow.StepLog{"start": {Output: map[string]any{"ok": true}, Status: cardflow.ExecSucceeded}}
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		head, err := s.GetExecutionHead(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get head", err)
		sameJSON(t, "head", head.Outline(), ex.Outline())
		_, err = s.GetExecutionHead(t.Context(), newOrg(), wf, ex.WorkflowExecutionID)
		wantCode(t, "head of another organization's execution", err, cardflow.ENOTFOUND)
		_, err = s.GetExecutionHead(t.Context(), org, wf, newID())
		wantCode(t, "head of a missing execution", err, cardflow.ENOTFOUND)
	})

	t.Run("ExecutionJSON", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		ex.State = cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: "po-1", Outputs: map[string]any{"lookup": map[string]any{"amount": 1200.5}, "check": nil}}
		ex.WorkflowDetails.WorkflowSteps = []cardflow.Step{{ID: "lookup", Name: "Look up", Type: "http", Config: map[string]any{"url": "https://erp/<orders>"}}}
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		ex.Status, ex.WorkflowOutputPayload = cardflow.ExecSucceeded, map[string]any{"approved": true}
		mustOK(t, "put", s.PutExecution(t.Context(), ex))
		got, err := s.GetExecutionJSON(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get JSON", err)
		want, err := json.Marshal(ex)
		mustOK(t, "encode", err)
		if string(got) != string(want) {
			t.Errorf("GetExecutionJSON:\ngot  %s\nwant %s", got, want)
		}
		// The engine's view still has its state and revision.
		full, err := s.GetExecution(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get", err)
		sameJSON(t, "state after put", full.State, ex.State)
		if full.Revision != ex.Revision {
			t.Errorf("revision: got %d, want %d", full.Revision, ex.Revision)
		}
		_, err = s.GetExecutionJSON(t.Context(), newOrg(), wf, ex.WorkflowExecutionID)
		wantCode(t, "get JSON of another organization's execution", err, cardflow.ENOTFOUND)
		_, err = s.GetExecutionJSON(t.Context(), org, wf, newID())
		wantCode(t, "get JSON of an unknown execution", err, cardflow.ENOTFOUND)
	})

	t.Run("ListFields", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		by := "bob"
		ex.Status, ex.WorkflowCurrentState, ex.ModifiedBy, ex.ModifiedOn = cardflow.ExecSucceeded, "end", &by, 1700000005000
		ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events, cardflow.Event{At: 1700000005000, Type: "ExecutionSucceeded"})
		ex.WorkflowEventLog.Total = 2
		mustOK(t, "put", s.PutExecution(t.Context(), ex))
		// What the list endpoints show of an execution, as of the last put.
		listed := func(e *cardflow.Execution) map[string]any {
			return map[string]any{
				"id": e.WorkflowExecutionID, "workflow": e.WorkflowID, "version": e.WorkflowVersion, "org": e.OrganizationID,
				"workspace": e.WorkspaceID, "name": e.WorkflowDetails.WorkflowName, "state": e.WorkflowCurrentState,
				"trigger": e.WorkflowTriggerType, "triggered_by": e.TriggeredBy, "status": e.Status, "log": e.WorkflowEventLog, "modified_by": e.ModifiedBy,
				"created_on": e.CreatedOn, "modified_on": e.ModifiedOn,
			}
		}
		for name, list := range map[string]func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error){
			"organization list": func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
				return s.ListExecutions(t.Context(), org, cardflow.ListOptions[cardflow.ExecutionKey]{})
			},
			"workflow list": func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
				return s.ListWorkflowExecutions(t.Context(), org, wf, cardflow.ListOptions[cardflow.ExecutionKey]{})
			},
		} {
			page, err := list()
			mustOK(t, name, err)
			if len(page.Items) != 1 {
				t.Errorf("%s: got %d items, want 1", name, len(page.Items))
				continue
			}
			sameJSON(t, name, listed(page.Items[0]), listed(ex))
		}
	})

	t.Run("ListForeignAfter", func(t *testing.T) {
		s := e.store(t)
		org, foreign := newOrg(), newOrg()
		wf, theirWF := workflows.create(t, s, org, 1), workflows.create(t, s, foreign, 1)
		createExecutions(t, s, org, 3, wf)
		theirs := createExecutions(t, s, foreign, 3, theirWF)
		after := &cardflow.ExecutionKey{WorkflowID: theirWF, WorkflowExecutionID: theirs[len(theirs)-1]}
		for name, list := range map[string]func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error){
			"organization list": func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
				return s.ListExecutions(t.Context(), org, cardflow.ListOptions[cardflow.ExecutionKey]{Limit: 10, After: after})
			},
			"workflow list": func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
				return s.ListWorkflowExecutions(t.Context(), org, wf, cardflow.ListOptions[cardflow.ExecutionKey]{Limit: 10, After: after})
			},
		} {
			page, err := list()
			mustOK(t, name, err)
			for _, ex := range page.Items {
				if ex.OrganizationID != org || ex.WorkflowID != wf {
					t.Errorf("%s: got execution %s of %s/%s, want only %s/%s", name, ex.WorkflowExecutionID, ex.OrganizationID, ex.WorkflowID, org, wf)
				}
			}
		}
	})
}

func checkExecutionList(t *testing.T, total, limit int, list func(cardflow.ListOptions[cardflow.ExecutionKey]) (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error), want []string) {
	t.Helper()
	got := executionIDs(walk(t, total, limit, list, executionKey))
	if !slices.Equal(got, want) {
		t.Errorf("listed executions:\ngot  %v\nwant %v", got, want)
	}
	if !slices.IsSortedFunc(got, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("listed executions are not ordered by id descending: %v", got)
	}
	first, err := list(cardflow.ListOptions[cardflow.ExecutionKey]{Limit: limit})
	mustOK(t, "list", err)
	if first.LastKey != nil {
		keyFields(t, *first.LastKey, "workflow_id", "workflow_execution_id")
	}
}
