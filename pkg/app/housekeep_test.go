package app_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/localrunner"
)

// node is one process of the service: its own engine and runner over the
// shared store, and a clock that may run ahead.
type node struct {
	svc    *app.Service
	runner *localrunner.Runner
}

func newNode(t *testing.T, store cardflow.Store, ahead time.Duration) *node {
	t.Helper()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(store, store.(cardflow.Deliverer), env)
	if err != nil {
		t.Fatal(err)
	}
	runner, err := localrunner.New(eng, store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	clock := func() time.Time { return time.Now().Add(ahead) }
	svc, err := app.New(store, app.Deps{Checker: eng, CardChecker: cards.Checker{}, Runner: runner}, app.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return &node{svc: svc, runner: runner}
}

func openStore(t testing.TB) *boltstore.Store {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

var admin = cardflow.NewContextWithPrincipal(context.Background(),
	&cardflow.Principal{OrganizationID: "acme", WorkspaceID: "finance", Scopes: cardflow.AllScopes, Actor: "ops"})

// publishWait publishes a workflow that waits up to an hour for a resume.
func publishWait(t *testing.T, svc *app.Service) string {
	t.Helper()
	w, err := svc.SaveWorkflow(admin, app.SaveWorkflowInput{
		WorkflowName: "Wait for SAP",
		WorkflowSteps: []cardflow.Step{
			{ID: "start", Name: "Request", Type: cardflow.StepTrigger, Config: map[string]any{"kind": "REQUEST"}},
			{ID: "sap", Name: "SAP confirms", Type: "wait", Config: map[string]any{"timeout": "PT1H"}},
			{ID: "done", Name: "Done", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
		},
		WorkflowConnections: []cardflow.Connection{{From: "start", To: "sap"}, {From: "sap", To: "done"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(admin, w.WorkflowID, 1); err != nil {
		t.Fatal(err)
	}
	return w.WorkflowID
}

// await polls the execution until it has finished.
func await(t *testing.T, store cardflow.Store, workflowID, id string) *cardflow.Execution {
	t.Helper()
	var ex *cardflow.Execution
	testenv.WaitFor(t, "execution "+id+" to finish", func() bool {
		var err error
		if ex, err = store.GetExecution(t.Context(), "acme", workflowID, id); err != nil {
			t.Fatal(err)
		}
		return !ex.Open()
	})
	return ex
}

// awaitWaiting polls the execution until its wait is open.
func awaitWaiting(t *testing.T, store cardflow.Store, processID string) {
	t.Helper()
	testenv.WaitFor(t, "process "+processID+" to open its wait", func() bool {
		p, err := store.GetProcess(t.Context(), "acme", processID)
		return err == nil && p.Wait != nil
	})
}

// TestHousekeepEndsAnExecutionWhoseTimerWasLost: the process that ran an
// execution into its wait is gone, and no runner holds a timer for it.
// Housekeeping past the deadline times the wait out and the execution
// ends.
func TestHousekeepEndsAnExecutionWhoseTimerWasLost(t *testing.T) {
	store := openStore(t)
	first := newNode(t, store, 0)
	wf := publishWait(t, first.svc)
	out, err := first.svc.Trigger(admin, app.TriggerInput{WorkflowID: wf, ProcessID: "PO-1"})
	if err != nil {
		t.Fatal(err)
	}
	awaitWaiting(t, store, "PO-1")
	first.runner.Close()

	// Within the deadline (and its grace) housekeeping leaves the wait be.
	early := newNode(t, store, time.Hour)
	rep, err := early.svc.Housekeep(t.Context())
	if err != nil || rep.WaitsTimedOut != 0 {
		t.Fatalf("housekeeping at the deadline: got %+v, %v, want no wait timed out", rep, err)
	}

	later := newNode(t, store, time.Hour+app.WaitGrace+time.Second)
	rep, err = later.svc.Housekeep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := (app.HousekeepReport{WaitsTimedOut: 1}); rep != want {
		t.Errorf("report: got %+v, want %+v", rep, want)
	}
	ex := await(t, store, wf, out.ExecutionID)
	if ex.Status != cardflow.ExecTimedOut {
		t.Errorf("execution: got %s, want %s", ex.Status, cardflow.ExecTimedOut)
	}
	// The wait is claimed for good: a late resume is refused.
	if _, err := later.svc.Resume(admin, "PO-1", []byte(`{"source": "SAP"}`)); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		t.Errorf("resume after the timeout: got %v, want CONFLICT", err)
	}
	if rep, err := later.svc.Housekeep(t.Context()); err != nil || rep != (app.HousekeepReport{}) {
		t.Errorf("housekeeping again: got %+v, %v, want nothing done", rep, err)
	}
}

func TestHousekeepDropsAndDeletesExpiredRecords(t *testing.T) {
	store := openStore(t)
	now := newNode(t, store, 0)
	wf := publishWait(t, now.svc)

	// A resume for an execution that has not reached its wait is kept for
	// the early-resume window. This execution has no runner, so it never
	// gets there.
	ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: wf, WorkflowVersion: 1,
		OrganizationID: "acme", WorkspaceID: "finance", Status: cardflow.ExecRunning, CreatedOn: time.Now().UnixMilli()}
	p := &cardflow.Process{OrganizationID: "acme", ProcessID: "PO-early", WorkflowID: wf, ExecutionID: ex.WorkflowExecutionID}
	if err := store.StartExecution(t.Context(), ex, p, nil); err != nil {
		t.Fatal(err)
	}
	if out, err := now.svc.Resume(admin, "PO-early", []byte(`{"source": "SAP"}`)); err != nil || out.Resumed {
		t.Fatalf("early resume: got %+v, %v, want it kept", out, err)
	}
	// A trigger with an Idempotency-Key keeps its record for 24 hours.
	trig, err := now.svc.Trigger(admin, app.TriggerInput{WorkflowID: wf, ProcessID: "PO-2", IdempotencyKey: "order-2"})
	if err != nil {
		t.Fatal(err)
	}
	awaitWaiting(t, store, "PO-2")
	if _, err := now.svc.Cancel(admin, app.CancelInput{WorkflowID: wf, WorkflowExecutionID: trig.ExecutionID}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		ahead time.Duration
		want  app.HousekeepReport
	}{
		{0, app.HousekeepReport{}},
		{11 * time.Minute, app.HousekeepReport{EarlyResumesDropped: 1}},
		{25 * time.Hour, app.HousekeepReport{IdempotencyDeleted: 1}},
		{8 * 24 * time.Hour, app.HousekeepReport{ProcessesDeleted: 1}},
		{9 * 24 * time.Hour, app.HousekeepReport{}},
	} {
		rep, err := newNode(t, store, tc.ahead).svc.Housekeep(t.Context())
		if err != nil || rep != tc.want {
			t.Errorf("housekeeping %s ahead: got %+v, %v, want %+v", tc.ahead, rep, err, tc.want)
		}
	}
	if p, err := store.GetProcess(t.Context(), "acme", "PO-early"); err != nil || p.Early != nil {
		t.Errorf("process after housekeeping: got %+v, %v, want it without the early resume", p, err)
	}
	if _, err := store.GetProcess(t.Context(), "acme", "PO-2"); cardflow.ErrorCode(err) != cardflow.ENOTFOUND {
		t.Errorf("closed process a week on: got %v, want NOT_FOUND", err)
	}
	if _, err := store.GetIdempotency(t.Context(), "acme", "order-2", 0); cardflow.ErrorCode(err) != cardflow.ENOTFOUND {
		t.Errorf("idempotency record a day on: got %v, want NOT_FOUND", err)
	}
}
