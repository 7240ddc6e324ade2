package httpapi_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestSearchExecutions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := as("org-a")
	key := e.key("org-a", "read")
	wfA, _ := e.svc.SaveWorkflow(ctx, minimalWorkflow("", "search a"))
	wfB, _ := e.svc.SaveWorkflow(ctx, minimalWorkflow("", "search b"))
	statuses := []string{cardflow.ExecFailed, cardflow.ExecSucceeded, cardflow.ExecWaiting}
	var all []*cardflow.Execution
	for i := range 25 {
		wf := wfA
		if i%2 == 0 {
			wf = wfB
		}
		ex := &cardflow.Execution{
			WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: wf.WorkflowID, WorkflowVersion: 1,
			OrganizationID: "org-a", WorkspaceID: "org-a-ws", WorkflowCurrentState: "End", WorkflowTriggerType: "REQUEST",
			Status: statuses[i%3], CondensedLogs: map[string]cardflow.StepLog{}, WorkflowEventLog: cardflow.EventLog{Events: []cardflow.Event{}},
			WorkflowDetails: cardflow.WorkflowDetails{WorkflowName: wf.WorkflowName},
			CreatedOn:       1_700_000_000_000 + int64(i), State: cardflow.ExecutionState{ProcessID: fmt.Sprintf("PO-%d", i%4)},
		}
		if err := e.store.CreateExecution(ctx, ex); err != nil {
			t.Fatal(err)
		}
		all = append(all, ex)
	}
	want := func(f cardflow.ExecutionFilter) []string {
		var ids []string
		for i := len(all) - 1; i >= 0; i-- {
			if f.Matches(all[i]) {
				ids = append(ids, all[i].WorkflowExecutionID)
			}
		}
		return ids
	}
	execID := func(it map[string]any) string { return str(it["workflow_execution_id"]) }

	for _, tc := range []struct {
		query []string
		f     cardflow.ExecutionFilter
	}{
		{nil, cardflow.ExecutionFilter{}},
		{[]string{"status", "FAILED"}, cardflow.ExecutionFilter{Status: "FAILED"}},
		{[]string{"workflow_id", wfA.WorkflowID, "status", "WAITING"}, cardflow.ExecutionFilter{WorkflowID: wfA.WorkflowID, Status: "WAITING"}},
		{[]string{"process_id", "PO-2"}, cardflow.ExecutionFilter{ProcessID: "PO-2"}},
		{[]string{"trigger_type", "REQUEST", "created_after", "1700000000005", "created_before", "1700000000020"},
			cardflow.ExecutionFilter{TriggerType: "REQUEST", CreatedAfter: 1_700_000_000_005, CreatedBefore: 1_700_000_000_020}},
	} {
		for _, limit := range []int{2, 30} {
			t.Run(fmt.Sprintf("%v limit %d", tc.query, limit), func(t *testing.T) {
				got := walkSearch(t, e, key, limit, tc.query, execID)
				checkSequence(t, "search", got, want(tc.f))
			})
		}
	}

	t.Run("lastKey fields", func(t *testing.T) {
		r := e.get("/v1/workflows/searchExecutions", key, "limit", "3", "workflow_id", wfA.WorkflowID)
		last, _ := r.body["lastKey"].(map[string]any)
		if got, want := keys(last), "last_created_on,last_workflow_execution_id,last_workflow_id"; got != want {
			t.Errorf("got lastKey fields %s, want %s", got, want)
		}
	})

	t.Run("refused parameters", func(t *testing.T) {
		id := all[0].WorkflowExecutionID
		for _, tc := range []struct {
			query []string
			want  string
		}{
			{[]string{"status", "BROKEN"}, "status must be"},
			{[]string{"status", ""}, "status must be"},
			{[]string{"trigger_type", "MANUAL"}, "trigger_type must be"},
			{[]string{"workflow_id", "not-an-id"}, "workflow_id must be an id"},
			{[]string{"process_id", ""}, "process_id must not be empty"},
			{[]string{"created_after", "yesterday"}, "created_after must be"},
			{[]string{"created_after", "-5"}, "created_after must be"},
			{[]string{"created_before", "0"}, "created_before must be after 0"},
			{[]string{"limit", "0"}, "limit must be"},
			{[]string{"last_workflow_execution_id", id}, "page key needs"},
			{[]string{"last_workflow_id", all[0].WorkflowID, "last_workflow_execution_id", id}, "page key needs"},
			{[]string{"last_created_on", "5"}, "page key needs"},
			{[]string{"last_workflow_id", "x", "last_workflow_execution_id", id, "last_created_on", "5"}, "last_workflow_id of the page key"},
			{[]string{"workflow_execution_id", id}, "unknown query parameter"},
		} {
			r := e.get("/v1/workflows/searchExecutions", key, tc.query...)
			if r.status != 400 || r.code() != "VALIDATION_ERROR" || !strings.Contains(r.msg(), tc.want) {
				t.Errorf("%v: got %d %s, want 400 VALIDATION_ERROR saying %q", tc.query, r.status, r.raw, tc.want)
			}
		}
	})

	t.Run("other organization", func(t *testing.T) {
		other := e.key("org-b", "read")
		r := e.get("/v1/workflows/searchExecutions", other, "limit", "30", "workflow_id", wfA.WorkflowID)
		if r.status != 200 || len(items(r)) != 0 {
			t.Errorf("org-b searching org-a's workflow: got %d %s, want 200 and no items", r.status, r.raw)
		}
		r = e.get("/v1/workflows/searchExecutions", other, "limit", "30")
		if got := slices.Collect(func(yield func(string) bool) {
			for _, it := range items(r) {
				if !yield(str(it["organization_id"])) {
					return
				}
			}
		}); len(got) != 0 {
			t.Errorf("org-b's search: got executions of %v, want none", got)
		}
	})
}

// walkSearch is walk for searches, whose page key holds a time in epoch
// milliseconds, sent back as digits.
func walkSearch(t *testing.T, e *env, key string, limit int, fixed []string, id func(map[string]any) string) []string {
	t.Helper()
	var got []string
	query := append([]string{"limit", strconv.Itoa(limit)}, fixed...)
	for page := 0; page < 100; page++ {
		r := e.get("/v1/workflows/searchExecutions", key, query...)
		if r.status != 200 {
			t.Fatalf("page %d: got %d %s", page, r.status, r.raw)
		}
		list := items(r)
		for _, it := range list {
			got = append(got, id(it))
		}
		last, more := r.body["lastKey"].(map[string]any)
		if !more {
			return got
		}
		if len(list) != limit {
			t.Fatalf("page %d: got %d items and a lastKey, want %d", page, len(list), limit)
		}
		query = append([]string{"limit", strconv.Itoa(limit)}, fixed...)
		for k, v := range last {
			if n, ok := v.(float64); ok {
				v = strconv.FormatFloat(n, 'f', -1, 64)
			}
			query = append(query, k, fmt.Sprint(v))
		}
	}
	t.Fatal("more than 100 pages")
	return nil
}
