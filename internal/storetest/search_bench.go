package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// BenchSearch measures the second page (of 20) of four searches over 1,000
// executions of one organization: by status, by workflow and status, by
// status and trigger type (an index that does not hold every filter) and
// by a time range. reset runs before the measured loop, report after it.
func BenchSearch(b *testing.B, s cardflow.Store, reset func(), report func(*testing.B)) {
	ctx := b.Context()
	org := "org-" + cardflow.NewID(time.Now())
	wf := &cardflow.Workflow{OrganizationID: org, WorkflowName: "purchase approval"}
	if err := s.SaveWorkflowVersion(ctx, wf); err != nil {
		b.Fatal(err)
	}
	statuses := []string{cardflow.ExecSucceeded, cardflow.ExecSucceeded, cardflow.ExecFailed, cardflow.ExecWaiting}
	events := make([]cardflow.Event, 12)
	for i := range events {
		events[i] = cardflow.Event{At: 1700000000000, Type: cardflow.EventStepFinished, StepID: "lookup", Step: "Look up order"}
	}
	for i := range 1000 {
		ex := &cardflow.Execution{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 1, WorkflowExecutionID: cardflow.NewID(time.Now()),
			Status: statuses[i%len(statuses)], WorkflowTriggerType: []string{cardflow.TriggerRequest, cardflow.TriggerSchedule}[i%5/4],
			WorkflowCurrentState: "Ask approver", WorkflowEventLog: cardflow.EventLog{Events: events, Total: len(events)},
			WorkflowDetails: cardflow.WorkflowDetails{WorkflowName: wf.WorkflowName}, CreatedOn: 1700000000000 + int64(i),
			State: cardflow.ExecutionState{ProcessID: fmt.Sprintf("PO-%d", i)}}
		if err := s.CreateExecution(ctx, ex); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		f    cardflow.ExecutionFilter
	}{
		{"status", cardflow.ExecutionFilter{Status: cardflow.ExecFailed}},
		{"workflow and status", cardflow.ExecutionFilter{WorkflowID: wf.WorkflowID, Status: cardflow.ExecWaiting}},
		{"status and trigger type (filtered)", cardflow.ExecutionFilter{Status: cardflow.ExecSucceeded, TriggerType: cardflow.TriggerRequest}},
		{"time range", cardflow.ExecutionFilter{CreatedAfter: 1700000000100, CreatedBefore: 1700000000900}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			first, err := s.SearchExecutions(ctx, org, bc.f, cardflow.ListOptions[cardflow.SearchKey]{Limit: 20})
			if err != nil || len(first.Items) != 20 || first.LastKey == nil {
				b.Fatalf("first page: %d items, %v", len(first.Items), err)
			}
			// The second page: a page key is what a client sends most.
			opt := cardflow.ListOptions[cardflow.SearchKey]{Limit: 20, After: first.LastKey}
			page := func() error { _, err := s.SearchExecutions(ctx, org, bc.f, opt); return err }
			if err := page(); err != nil {
				b.Fatal(err)
			}
			reset()
			for b.Loop() {
				if err := page(); err != nil {
					b.Fatal(err)
				}
			}
			report(b)
		})
	}
}
