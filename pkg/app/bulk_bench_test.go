package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// bulkBenchSize is how many executions the bulk cancel benchmark cancels.
const bulkBenchSize = 10_000

// startWaiting stores n WAITING executions of org with their process
// records, from 16 goroutines (the embedded store commits concurrent
// writes together).
func startWaiting(b *testing.B, store cardflow.Store, org string, n int) []*cardflow.Execution {
	exs := make([]*cardflow.Execution, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				ex := &cardflow.Execution{
					WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: fmt.Sprintf("01KWF%021d", i%7), WorkflowVersion: 1,
					OrganizationID: org, WorkspaceID: "finance", WorkflowCurrentState: "Approve", WorkflowTriggerType: cardflow.TriggerRequest,
					Status: cardflow.ExecWaiting, CreatedOn: time.Now().UnixMilli() - 1000,
					State: cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: fmt.Sprintf("PO-%d", i)},
				}
				proc := &cardflow.Process{OrganizationID: org, ProcessID: ex.State.ProcessID, WorkflowID: ex.WorkflowID, ExecutionID: ex.WorkflowExecutionID}
				if err := store.StartExecution(context.Background(), ex, proc, nil); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				exs[i] = ex
			}
		}()
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
	return exs
}

// benchBulkCancel cancels 10,000 WAITING executions with one bulk
// operation, worked by one worker, and checks that every one was
// cancelled by it exactly once.
func benchBulkCancel(b *testing.B, store cardflow.Store) {
	for b.Loop() {
		b.StopTimer()
		org := "org-" + cardflow.NewID(time.Now())
		exs := startWaiting(b, store, org, bulkBenchSize)
		svc, err := app.New(store, app.Deps{Runner: idleRunner{}})
		if err != nil {
			b.Fatal(err)
		}
		ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{OrganizationID: org, WorkspaceID: "finance", Scopes: cardflow.AllScopes, Actor: "ops"})
		b.StartTimer()
		op, err := svc.StartBulkOperation(ctx, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecWaiting})
		if err != nil {
			b.Fatal(err)
		}
		if err := svc.RunBulkOperations(context.Background(), time.Now().Add(time.Hour)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		got, err := store.GetBulkOperation(context.Background(), org, op.BulkOperationID)
		if err != nil {
			b.Fatal(err)
		}
		if got.Status != cardflow.BulkSucceeded || got.Done != bulkBenchSize || got.Failed+got.Skipped != 0 {
			b.Fatalf("got %s with %d done, %d failed, %d skipped; want all %d done", got.Status, got.Done, got.Failed, got.Skipped, bulkBenchSize)
		}
		missed, twice := 0, 0
		for _, ex := range exs {
			e, err := store.GetExecution(context.Background(), org, ex.WorkflowID, ex.WorkflowExecutionID)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, ev := range e.WorkflowEventLog.Events {
				if ev.Type == cardflow.EventCancelled {
					n++
				}
			}
			switch {
			case e.Status != cardflow.ExecCancelled || n == 0 || *e.ModifiedBy != app.BulkActor(op.BulkOperationID):
				missed++
			case n > 1:
				twice++
			}
		}
		b.ReportMetric(float64(missed), "missed")
		b.ReportMetric(float64(twice), "twice")
		if missed+twice > 0 {
			b.Fatalf("%d executions missed, %d cancelled twice", missed, twice)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(bulkBenchSize)*float64(b.N)/b.Elapsed().Seconds(), "executions/s")
}

// BenchmarkBulkCancel is a bulk cancel of 10,000 executions on the
// embedded store.
func BenchmarkBulkCancel(b *testing.B) {
	benchBulkCancel(b, openStore(b))
}

// BenchmarkBulkCancelDynamoDB is the same on DynamoDB Local.
func BenchmarkBulkCancelDynamoDB(b *testing.B) {
	open, _ := dynamostoretest.Tables(b)
	benchBulkCancel(b, open(b))
}
