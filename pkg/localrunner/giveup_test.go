package localrunner_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/localrunner"
)

// failingAdvancer fails every Advance while failing is set, as Advance
// fails with the store out of reach.
type failingAdvancer struct {
	eng     localrunner.Advancer
	failing atomic.Bool
	calls   atomic.Int32
}

func (f *failingAdvancer) Advance(ctx context.Context, ref cardflow.ExecutionRef) (engine.Result, error) {
	f.calls.Add(1)
	if f.failing.Load() {
		return engine.Result{}, cardflow.Errorf(cardflow.EUNAVAILABLE, "the store cannot be reached")
	}
	return f.eng.Advance(ctx, ref)
}

// TestGiveUpEndsFailed: when Advance fails the given number of times in a
// row, the runner gives up on the execution and records it FAILED with
// the reason, in the step it was in; before, it tried for ever and the
// record said RUNNING. A redrive runs it on from that step.
func TestGiveUpEndsFailed(t *testing.T) {
	t.Parallel()
	store := boltStore(t, "cardflow.db")
	defer store.Close()
	eng, err := localmode.NewEngine(store, store, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	adv := &failingAdvancer{eng: eng}
	runner, err := localrunner.New(adv, store, localrunner.WithRetryDelay(time.Millisecond), localrunner.WithAttempts(3))
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	svc, err := app.New(store, app.Deps{Checker: eng, CardChecker: cards.Checker{}, Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "acme", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "ops",
	})
	w, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "give up", WorkflowSteps: []cardflow.Step{
		{ID: "start", Name: "start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "prep", Name: "prep", Type: "transform", Config: map[string]any{"output": "{{ 6 * 7 }}"}},
		{ID: "pause", Name: "pause", Type: "delay", Config: map[string]any{"duration": "PT1S"}},
		{ID: "done", Name: "done", Type: "end", Config: map[string]any{"output": "{{ steps.prep.output }}"}},
	}, WorkflowConnections: []cardflow.Connection{{From: "start", To: "prep"}, {From: "prep", To: "pause"}, {From: "pause", To: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(ctx, w.WorkflowID, w.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: w.WorkflowID})
	if err != nil {
		t.Fatal(err)
	}
	await := func(status string) *cardflow.Execution {
		t.Helper()
		var ex *cardflow.Execution
		testenv.WaitFor(t, "the execution to be "+status, func() bool {
			if ex, err = svc.GetExecution(ctx, w.WorkflowID, out.ExecutionID); err != nil {
				t.Fatal(err)
			}
			return ex.Status == status
		})
		return ex
	}
	await(cardflow.ExecWaiting)
	adv.failing.Store(true)
	ex := await(cardflow.ExecFailed)
	reason, _ := ex.WorkflowOutputPayload["error"].(string)
	if want := "the runner gave up after 3 failed attempts to run it: the store cannot be reached"; ex.WorkflowCurrentState != "pause" || reason != want {
		t.Errorf("got FAILED in %q saying %q, want in pause saying %q", ex.WorkflowCurrentState, reason, want)
	}
	// The first Advance ran the steps up to the delay; three more failed.
	time.Sleep(50 * time.Millisecond)
	if got := adv.calls.Load(); got != 4 {
		t.Errorf("Advance calls: got %d, want 4: the runner gave up after the third failure", got)
	}

	adv.failing.Store(false)
	if _, err := svc.RedriveExecution(ctx, app.RedriveInput{WorkflowID: w.WorkflowID, WorkflowExecutionID: out.ExecutionID}); err != nil {
		t.Fatalf("redrive: %v", err)
	}
	ex = await(cardflow.ExecSucceeded)
	if got, _ := ex.WorkflowOutputPayload[cardflow.PayloadValueKey].(float64); got != 42 {
		t.Errorf("output after the redrive: got %v, want 42", ex.WorkflowOutputPayload)
	}
}
