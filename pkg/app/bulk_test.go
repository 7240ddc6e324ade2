package app_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// crashingStore stops the worker at its n-th write of a bulk operation,
// as a process that dies there would: what it did before stays, what it
// held in memory is gone.
type crashingStore struct {
	cardflow.Store
	writes, at atomic.Int64
}

func (s *crashingStore) PutBulkOperation(ctx context.Context, op *cardflow.BulkOperation) error {
	if s.writes.Add(1) == s.at.Load() {
		return cardflow.Errorf(cardflow.EUNAVAILABLE, "the worker stopped")
	}
	return s.Store.PutBulkOperation(ctx, op)
}

// openExecutions stores n WAITING executions of org, with their process
// records, over three workflows.
func openExecutions(t *testing.T, store cardflow.Store, org string, n int) []*cardflow.Execution {
	t.Helper()
	var out []*cardflow.Execution
	for i := range n {
		ex := &cardflow.Execution{
			WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: fmt.Sprintf("01KWF%021d", i%3), WorkflowVersion: 1,
			OrganizationID: org, WorkspaceID: "finance", WorkflowCurrentState: "Approve", WorkflowTriggerType: cardflow.TriggerRequest,
			Status: cardflow.ExecWaiting, CreatedOn: time.Now().UnixMilli() - 1000,
			State: cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: fmt.Sprintf("PO-%d", i)},
		}
		proc := &cardflow.Process{OrganizationID: org, ProcessID: ex.State.ProcessID, WorkflowID: ex.WorkflowID, ExecutionID: ex.WorkflowExecutionID}
		if err := store.StartExecution(context.Background(), ex, proc, nil); err != nil {
			t.Fatal(err)
		}
		out = append(out, ex)
	}
	return out
}

// checkCancelledOnce checks that every execution was cancelled by the
// bulk operation, exactly once.
func checkCancelledOnce(t *testing.T, store cardflow.Store, exs []*cardflow.Execution, id string) {
	t.Helper()
	for _, ex := range exs {
		got, err := store.GetExecution(context.Background(), ex.OrganizationID, ex.WorkflowID, ex.WorkflowExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		cancels := 0
		for _, ev := range got.WorkflowEventLog.Events {
			if ev.Type == cardflow.EventCancelled {
				cancels++
			}
		}
		if got.Status != cardflow.ExecCancelled || cancels != 1 || got.ModifiedBy == nil || *got.ModifiedBy != app.BulkActor(id) {
			t.Errorf("execution %s: got %s with %d cancel events, by %v; want CANCELLED once, by the bulk operation", ex.WorkflowExecutionID, got.Status, cancels, got.ModifiedBy)
		}
	}
}

// TestBulkCancelSurvivesCrashes stops the worker at each of its writes in
// turn (the lease it takes, a page it records before acting, the counts
// it records after) and has another worker, after the lease, finish the
// operation: every execution is cancelled once, none is missed, and the
// counts hold each once.
func TestBulkCancelSurvivesCrashes(t *testing.T) {
	// 65 executions: pages of 30, 30 and 5, so 7 writes in an unbroken run.
	const n = 65
	for at := int64(1); at <= 7; at++ {
		t.Run(fmt.Sprint("stopped at write ", at), func(t *testing.T) {
			base := openStore(t)
			exs := openExecutions(t, base, "acme", n)
			store := &crashingStore{Store: base}
			store.at.Store(at)
			var now atomic.Int64
			now.Store(time.Now().UnixNano())
			clock := func() time.Time { return time.Unix(0, now.Load()) }
			first, err := app.New(store, app.Deps{Runner: idleRunner{}}, app.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			op, err := first.StartBulkOperation(admin, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecWaiting})
			if err != nil {
				t.Fatal(err)
			}
			if err := first.RunBulkOperations(context.Background(), clock().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if got, _ := base.GetBulkOperation(context.Background(), "acme", op.BulkOperationID); got.Status != cardflow.BulkRunning {
				t.Fatalf("after the worker stopped: got %s, want RUNNING", got.Status)
			}
			// Another worker, once the lease has run out.
			now.Add(int64(app.BulkLease + time.Second))
			second, err := app.New(base, app.Deps{Runner: idleRunner{}}, app.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			if err := second.RunBulkOperations(context.Background(), clock().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			got, err := base.GetBulkOperation(context.Background(), "acme", op.BulkOperationID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != cardflow.BulkSucceeded || got.Done != n || got.Failed != 0 || got.Skipped != 0 {
				t.Errorf("got %s, done %d, failed %d, skipped %d; want SUCCEEDED with %d done", got.Status, got.Done, got.Failed, got.Skipped, n)
			}
			checkCancelledOnce(t, base, exs, op.BulkOperationID)
		})
	}
}

// TestBulkLease: a worker leaves an operation another holds alone.
func TestBulkLease(t *testing.T) {
	store := openStore(t)
	openExecutions(t, store, "acme", 3)
	svc, err := app.New(store, app.Deps{Runner: idleRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	op, err := svc.StartBulkOperation(admin, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecWaiting})
	if err != nil {
		t.Fatal(err)
	}
	held, _ := store.GetBulkOperation(context.Background(), "acme", op.BulkOperationID)
	held.LeaseUntil = time.Now().Add(time.Minute).UnixMilli()
	if err := store.PutBulkOperation(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	if err := svc.RunBulkOperations(context.Background(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.GetBulkOperation(context.Background(), "acme", op.BulkOperationID); got.Done != 0 || got.Revision != held.Revision {
		t.Errorf("an operation another worker holds: got done %d at revision %d, want it untouched at %d", got.Done, got.Revision, held.Revision)
	}
}

func TestStartBulkOperation(t *testing.T) {
	store := openStore(t)
	svc, err := app.New(store, app.Deps{Runner: idleRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := svc.StartBulkOperation(admin, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecWaiting, ClientToken: "t-1"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := svc.StartBulkOperation(admin, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecWaiting, ClientToken: "t-1"})
	if err != nil || again.BulkOperationID != first.BulkOperationID {
		t.Errorf("the same start again: got %v, %v; want operation %s", again, err, first.BulkOperationID)
	}
	_, err = svc.StartBulkOperation(admin, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecFailed, ClientToken: "t-1"})
	if got := cardflow.ErrorCode(err); got != cardflow.ECONFLICT {
		t.Errorf("the token with other filters: got %v, want CONFLICT", err)
	}
	for _, in := range []app.StartBulkInput{
		{Action: "delete", Status: cardflow.ExecWaiting},
		{Action: cardflow.BulkCancel, Status: "DONE"},
	} {
		if _, err := svc.StartBulkOperation(admin, in); cardflow.ErrorCode(err) != cardflow.EINVALID {
			t.Errorf("%+v: got %v, want VALIDATION_ERROR", in, err)
		}
	}
	reader := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{OrganizationID: "acme", Scopes: []string{cardflow.ScopeRead}})
	if _, err := svc.StartBulkOperation(reader, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecWaiting}); cardflow.ErrorCode(err) != cardflow.EFORBIDDEN {
		t.Errorf("a read key: got %v, want FORBIDDEN", err)
	}
}

// idleRunner takes executions and runs none of them.
type idleRunner struct{}

func (idleRunner) Start(context.Context, cardflow.ExecutionRef) error                { return nil }
func (idleRunner) Wake(context.Context, cardflow.ExecutionRef, *cardflow.Wait) error { return nil }
func (idleRunner) Stop(context.Context, cardflow.ExecutionRef) error                 { return nil }

// TestBulkRedriveSurvivesCrashes: a worker stopped at each write in turn
// after redriving some executions, which then fail again before another
// worker takes over; the other worker does not redrive those a second
// time, and the operation counts each once.
func TestBulkRedriveSurvivesCrashes(t *testing.T) {
	const n = 35
	for at := int64(1); at <= 5; at++ {
		t.Run(fmt.Sprint("stopped at write ", at), func(t *testing.T) {
			base := openStore(t)
			ctx := context.Background()
			var exs []*cardflow.Execution
			for i := range n {
				ex := &cardflow.Execution{
					WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "01KWF000000000000000000000", WorkflowVersion: 1,
					OrganizationID: "acme", WorkspaceID: "finance", WorkflowCurrentState: "Check stock", WorkflowTriggerType: cardflow.TriggerRequest,
					Status: cardflow.ExecFailed, CreatedOn: time.Now().UnixMilli() - 1000,
					WorkflowDetails: cardflow.WorkflowDetails{WorkflowSteps: []cardflow.Step{{ID: "check", Name: "Check stock", Type: "http"}}},
					State:           cardflow.ExecutionState{FailedStep: "check", ProcessID: fmt.Sprintf("SO-%d", i)},
				}
				proc := &cardflow.Process{OrganizationID: "acme", ProcessID: ex.State.ProcessID, WorkflowID: ex.WorkflowID, ExecutionID: ex.WorkflowExecutionID}
				if err := base.StartExecution(ctx, ex, proc, nil); err != nil {
					t.Fatal(err)
				}
				proc.Closed = true
				if err := base.PutProcess(ctx, proc); err != nil {
					t.Fatal(err)
				}
				exs = append(exs, ex)
			}
			store := &crashingStore{Store: base}
			store.at.Store(at)
			var now atomic.Int64
			now.Store(time.Now().UnixNano())
			clock := func() time.Time { return time.Unix(0, now.Load()) }
			first, err := app.New(store, app.Deps{Runner: idleRunner{}}, app.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			op, err := first.StartBulkOperation(admin, app.StartBulkInput{Action: cardflow.BulkRedrive, Status: cardflow.ExecFailed})
			if err != nil {
				t.Fatal(err)
			}
			if err := first.RunBulkOperations(ctx, clock().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			// What the first worker redrove fails again.
			for _, ex := range exs {
				got, err := base.GetExecution(ctx, "acme", ex.WorkflowID, ex.WorkflowExecutionID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status == cardflow.ExecRunning {
					got.Status, got.State.FailedStep = cardflow.ExecFailed, "check"
					if err := base.PutExecution(ctx, got); err != nil {
						t.Fatal(err)
					}
				}
			}
			now.Add(int64(app.BulkLease + time.Second))
			second, err := app.New(base, app.Deps{Runner: idleRunner{}}, app.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			if err := second.RunBulkOperations(ctx, clock().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			got, err := base.GetBulkOperation(ctx, "acme", op.BulkOperationID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != cardflow.BulkSucceeded || got.Done != n || got.Failed+got.Skipped != 0 {
				t.Errorf("got %s, done %d, failed %d, skipped %d; want SUCCEEDED with %d done", got.Status, got.Done, got.Failed, got.Skipped, n)
			}
			for _, ex := range exs {
				e, err := base.GetExecution(ctx, "acme", ex.WorkflowID, ex.WorkflowExecutionID)
				if err != nil {
					t.Fatal(err)
				}
				redrives := 0
				for _, ev := range e.WorkflowEventLog.Events {
					if ev.Type == cardflow.EventRedriven && ev.Actor == app.BulkActor(op.BulkOperationID) {
						redrives++
					}
				}
				if redrives != 1 {
					t.Errorf("execution %s: redriven %d times by the operation, want once", ex.WorkflowExecutionID, redrives)
				}
			}
		})
	}
}

// recordingStore notes each write of a bulk operation, in order.
type recordingStore struct {
	cardflow.Store
	mu     sync.Mutex
	writes []cardflow.BulkOperation
}

func (s *recordingStore) PutBulkOperation(ctx context.Context, op *cardflow.BulkOperation) error {
	s.mu.Lock()
	s.writes = append(s.writes, *op)
	s.mu.Unlock()
	return s.Store.PutBulkOperation(ctx, op)
}

// TestBulkOrganizationsTakeTurns: one organization's large operation (three
// pages) does not hold back another organization's small one started
// after it: the small one ends while the large one still has pages left,
// and both end.
func TestBulkOrganizationsTakeTurns(t *testing.T) {
	base := openStore(t)
	openExecutions(t, base, "acme", 65)
	openExecutions(t, base, "globex", 5)
	store := &recordingStore{Store: base}
	svc, err := app.New(store, app.Deps{Runner: idleRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	large, err := svc.StartBulkOperation(admin, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecWaiting})
	if err != nil {
		t.Fatal(err)
	}
	globex := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{OrganizationID: "globex", WorkspaceID: "finance", Scopes: cardflow.AllScopes, Actor: "ops"})
	small, err := svc.StartBulkOperation(globex, app.StartBulkInput{Action: cardflow.BulkCancel, Status: cardflow.ExecWaiting})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RunBulkOperations(context.Background(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	largeDone, ended := 0, false // the large operation's count when the small one ended
	for _, w := range store.writes {
		if w.BulkOperationID == large.BulkOperationID {
			largeDone = w.Done
		}
		if w.BulkOperationID == small.BulkOperationID && w.Status == cardflow.BulkSucceeded {
			ended = true
			break
		}
	}
	if !ended || largeDone >= 65 {
		t.Errorf("the small operation ended with the large one at %d of 65 done, want it to end while the large one had pages left", largeDone)
	}
	for _, op := range []struct {
		org, id string
		n       int
	}{{"acme", large.BulkOperationID, 65}, {"globex", small.BulkOperationID, 5}} {
		got, err := base.GetBulkOperation(context.Background(), op.org, op.id)
		if err != nil || got.Status != cardflow.BulkSucceeded || got.Done != op.n {
			t.Errorf("%s: got %v (%v), want SUCCEEDED with %d done", op.org, got, err, op.n)
		}
	}
}
