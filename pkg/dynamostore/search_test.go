package dynamostore_test

import (
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/storetest"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestSearchRequests checks that a search page is one Query of an index
// and one BatchGetItem of the heads, whichever filters it has, and never
// a Scan: the counts are compared whole, so any other request fails.
func TestSearchRequests(t *testing.T) {
	counter := &requestCounter{counts: map[string]int{}}
	s := newStore(t, counter.clientOption)
	ctx := t.Context()
	org := "org-" + cardflow.NewID(time.Now())
	wf := &cardflow.Workflow{OrganizationID: org, WorkflowName: "searched"}
	if err := s.SaveWorkflowVersion(ctx, wf); err != nil {
		t.Fatal(err)
	}
	statuses := []string{cardflow.ExecFailed, cardflow.ExecRunning}
	for i := range 40 {
		ex := &cardflow.Execution{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 1, WorkflowExecutionID: cardflow.NewID(time.Now()),
			Status: statuses[i%2], WorkflowTriggerType: cardflow.TriggerRequest, CreatedOn: 1700000000000 + int64(i),
			State: cardflow.ExecutionState{ProcessID: "PO-1"}}
		if err := s.CreateExecution(ctx, ex); err != nil {
			t.Fatal(err)
		}
	}
	counter.take()
	want := map[string]int{"Query": 1, "BatchGetItem": 1}
	for _, f := range []cardflow.ExecutionFilter{
		{},
		{Status: cardflow.ExecFailed},
		{WorkflowID: wf.WorkflowID},
		{WorkflowID: wf.WorkflowID, Status: cardflow.ExecFailed},
		{ProcessID: "PO-1", Status: cardflow.ExecFailed},
		{TriggerType: cardflow.TriggerRequest},
		{Status: cardflow.ExecFailed, TriggerType: cardflow.TriggerRequest},
		{Status: cardflow.ExecRunning, CreatedAfter: 1700000000005, CreatedBefore: 1700000000040},
	} {
		opt := cardflow.ListOptions[cardflow.SearchKey]{Limit: 5}
		for page := 1; page <= 3; page++ {
			p, err := s.SearchExecutions(ctx, org, f, opt)
			if err != nil {
				t.Fatalf("search %+v: %v", f, err)
			}
			if got := format(counter.take()); got != format(want) {
				t.Errorf("search %+v, page %d: got requests %s, want %s", f, page, got, format(want))
			}
			if len(p.Items) != 5 || p.LastKey == nil {
				t.Fatalf("search %+v, page %d: got %d items, LastKey %v; want a full page and more", f, page, len(p.Items), p.LastKey)
			}
			opt.After = p.LastKey
		}
	}
	if len(counter.inconsistent) > 0 {
		t.Errorf("got reads of base tables that are not consistent: %v", counter.inconsistent)
	}
}

// BenchmarkSearch is the store's share of a searchExecutions page of 20
// over 1,000 executions of one organization: one Query of a search index
// and one BatchGetItem of the heads, over loopback to DynamoDB Local.
func BenchmarkSearch(b *testing.B) {
	counter := &requestCounter{counts: map[string]int{}}
	s := newStore(b, counter.clientOption)
	storetest.BenchSearch(b, s, func() { counter.take() }, func(b *testing.B) { reportRequests(b, counter) })
}
