package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// searchExecutions creates executions of two workflows with every
// combination of status, trigger type and process id over created_on
// 1000..1000+n-1 ms (several share a millisecond), and returns them.
func searchExecutions(t *testing.T, s cardflow.Store, org string, n int) (string, string, []*cardflow.Execution) {
	t.Helper()
	wfA, wfB := workflows.create(t, s, org, 1), workflows.create(t, s, org, 1)
	statuses := []string{cardflow.ExecRunning, cardflow.ExecFailed, cardflow.ExecSucceeded, cardflow.ExecWaiting}
	var all []*cardflow.Execution
	for i := range n {
		e := execution(org, []string{wfA, wfB}[i%2])
		e.Status = statuses[i%len(statuses)]
		e.WorkflowTriggerType = []string{cardflow.TriggerRequest, cardflow.TriggerSchedule}[(i/3)%2]
		e.State.ProcessID = fmt.Sprintf("PO-%d", i%5)
		e.CreatedOn = 1000 + int64(i/2)
		mustOK(t, "create execution", s.CreateExecution(t.Context(), e))
		all = append(all, e)
	}
	return wfA, wfB, all
}

// searchOrder sorts executions as a search lists them.
func searchOrder(es []*cardflow.Execution) []string {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b *cardflow.Execution) int {
		if a.CreatedOn != b.CreatedOn {
			return int(b.CreatedOn - a.CreatedOn)
		}
		switch {
		case a.WorkflowExecutionID > b.WorkflowExecutionID:
			return -1
		case a.WorkflowExecutionID < b.WorkflowExecutionID:
			return 1
		}
		return 0
	})
	return executionIDs(es)
}

// walkSearch reads every page of a search. With exact set it checks the
// rules of every list (walk); otherwise only those a search on an index
// that does not hold every filter keeps: no page is over the limit, and
// the pages yield every match once and in order.
func walkSearch(t *testing.T, s cardflow.Store, org string, f cardflow.ExecutionFilter, total, limit int) []string {
	t.Helper()
	list := func(opt cardflow.ListOptions[cardflow.SearchKey]) (cardflow.Page[*cardflow.Execution, cardflow.SearchKey], error) {
		return s.SearchExecutions(t.Context(), org, f, opt)
	}
	if _, exact := f.Index(); exact {
		return executionIDs(walk(t, total, limit, list, cardflow.SearchKeyOf))
	}
	var all []*cardflow.Execution
	var after *cardflow.SearchKey
	for page := 1; page < 1000; page++ {
		p, err := list(cardflow.ListOptions[cardflow.SearchKey]{Limit: limit, After: after})
		mustOK(t, "search page", err)
		if len(p.Items) > limit {
			t.Fatalf("page %d: got %d items, over the limit %d", page, len(p.Items), limit)
		}
		all = append(all, p.Items...)
		if p.LastKey == nil {
			return executionIDs(all)
		}
		after = p.LastKey
	}
	t.Fatal("search did not end within 1000 pages")
	return nil
}

func testSearch(t *testing.T, e env) {
	t.Run("Filters", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wfA, _, all := searchExecutions(t, s, org, 40)
		for _, tc := range []struct {
			name string
			f    cardflow.ExecutionFilter
		}{
			{"no filter", cardflow.ExecutionFilter{}},
			{"status", cardflow.ExecutionFilter{Status: cardflow.ExecFailed}},
			{"workflow", cardflow.ExecutionFilter{WorkflowID: wfA}},
			{"workflow and status", cardflow.ExecutionFilter{WorkflowID: wfA, Status: cardflow.ExecRunning}},
			{"process id", cardflow.ExecutionFilter{ProcessID: "PO-3"}},
			{"process id and status", cardflow.ExecutionFilter{ProcessID: "PO-3", Status: cardflow.ExecSucceeded}},
			{"trigger type", cardflow.ExecutionFilter{TriggerType: cardflow.TriggerSchedule}},
			{"status and trigger type", cardflow.ExecutionFilter{Status: cardflow.ExecFailed, TriggerType: cardflow.TriggerRequest}},
			{"workflow, status and trigger type", cardflow.ExecutionFilter{WorkflowID: wfA, Status: cardflow.ExecRunning, TriggerType: cardflow.TriggerSchedule}},
			{"created after", cardflow.ExecutionFilter{CreatedAfter: 1010}},
			{"created before", cardflow.ExecutionFilter{CreatedBefore: 1005}},
			{"created range and status", cardflow.ExecutionFilter{Status: cardflow.ExecFailed, CreatedAfter: 1003, CreatedBefore: 1015}},
			{"nothing matches", cardflow.ExecutionFilter{Status: cardflow.ExecTimedOut}},
			{"unknown process id", cardflow.ExecutionFilter{ProcessID: "PO-none"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var want []*cardflow.Execution
				for _, ex := range all {
					if tc.f.Matches(ex) {
						want = append(want, ex)
					}
				}
				for _, limit := range []int{3, 30} {
					got := walkSearch(t, s, org, tc.f, len(want), limit)
					if w := searchOrder(want); !slices.Equal(got, w) {
						t.Errorf("limit %d: got %d executions %v, want %d %v", limit, len(got), got, len(w), w)
					}
				}
			})
		}
	})

	t.Run("StatusChange", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		ex.Status, ex.State.ProcessID = cardflow.ExecRunning, "PO-1"
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		ex.Status = cardflow.ExecFailed
		mustOK(t, "put", s.PutExecution(t.Context(), ex))
		for _, tc := range []struct {
			f    cardflow.ExecutionFilter
			want int
		}{
			{cardflow.ExecutionFilter{Status: cardflow.ExecFailed}, 1},
			{cardflow.ExecutionFilter{Status: cardflow.ExecRunning}, 0},
			{cardflow.ExecutionFilter{WorkflowID: wf, Status: cardflow.ExecFailed}, 1},
			{cardflow.ExecutionFilter{WorkflowID: wf, Status: cardflow.ExecRunning}, 0},
			{cardflow.ExecutionFilter{ProcessID: "PO-1", Status: cardflow.ExecRunning}, 0},
		} {
			got := walkSearch(t, s, org, tc.f, tc.want, 5)
			if len(got) != tc.want {
				t.Errorf("search %+v after the execution failed: got %d executions, want %d", tc.f, len(got), tc.want)
			}
		}
		page, err := s.SearchExecutions(t.Context(), org, cardflow.ExecutionFilter{Status: cardflow.ExecFailed}, cardflow.ListOptions[cardflow.SearchKey]{})
		mustOK(t, "search", err)
		if len(page.Items) == 1 {
			sameJSON(t, "search item", page.Items[0].Outline(), ex.Outline())
		}
	})

	t.Run("PageKey", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		_, _, all := searchExecutions(t, s, org, 6)
		page, err := s.SearchExecutions(t.Context(), org, cardflow.ExecutionFilter{}, cardflow.ListOptions[cardflow.SearchKey]{Limit: 2})
		mustOK(t, "search", err)
		if page.LastKey == nil {
			t.Fatal("got no LastKey after 2 of 6 executions")
		}
		keyFields(t, *page.LastKey, "last_workflow_id", "last_workflow_execution_id", "last_created_on")
		// A page key outside the time range positions the walk all the
		// same: above it, the search starts at the top; below, it is over.
		order := searchOrder(all)
		for _, tc := range []struct {
			name  string
			after cardflow.SearchKey
			want  int
		}{
			{"above the range", cardflow.SearchKey{WorkflowID: all[0].WorkflowID, WorkflowExecutionID: newID(), CreatedOn: 5000}, 4},
			{"below the range", cardflow.SearchKey{WorkflowID: all[0].WorkflowID, WorkflowExecutionID: newID(), CreatedOn: 1}, 0},
		} {
			f := cardflow.ExecutionFilter{CreatedAfter: 1001, CreatedBefore: 1003}
			p, err := s.SearchExecutions(t.Context(), org, f, cardflow.ListOptions[cardflow.SearchKey]{After: &tc.after})
			mustOK(t, tc.name, err)
			if got := executionIDs(p.Items); len(got) != tc.want {
				t.Errorf("%s: got %v, want %d of %v", tc.name, got, tc.want, order)
			}
		}
	})

	t.Run("Isolation", func(t *testing.T) {
		s := e.store(t)
		org, other := newOrg(), newOrg()
		_, _, _ = searchExecutions(t, s, other, 8)
		for _, f := range []cardflow.ExecutionFilter{{}, {Status: cardflow.ExecFailed}, {ProcessID: "PO-1"}, {TriggerType: cardflow.TriggerRequest}} {
			page, err := s.SearchExecutions(t.Context(), org, f, cardflow.ListOptions[cardflow.SearchKey]{})
			mustOK(t, "search", err)
			if len(page.Items) != 0 || page.LastKey != nil {
				t.Errorf("search %+v of an organization without executions: got %d items, LastKey %v; want none", f, len(page.Items), page.LastKey)
			}
		}
	})
}
