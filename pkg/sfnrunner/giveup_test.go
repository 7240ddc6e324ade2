package sfnrunner_test

import (
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/fakes/sfnfake"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestAdvanceFailsForGood: when Advance fails until the definition's
// retries are used up, the GiveUp state records the execution FAILED with
// the reason, in the step it was in, and the state machine fails; before,
// the record said RUNNING for ever. A redrive runs it on as a new state
// machine execution, <id>-r1, from that step.
func TestAdvanceFailsForGood(t *testing.T) {
	store := boltStore(t, "giveup.db")
	// The retries' delays, minutes on AWS, pass in milliseconds here.
	st := newStack(t, store, store, func(c *sfnfake.Config) { c.RetryScale = 1e-4 })
	ctx := testContext()
	svc := st.harness.Service
	wf := publishWorkflow(t, svc, ctx,
		cardflow.Step{ID: "prep", Name: "prep", Type: "transform", Config: map[string]any{"output": "{{ 6 * 7 }}"}},
		cardflow.Step{ID: "pause", Name: "pause", Type: "delay", Config: map[string]any{"duration": "PT1S"}},
	)
	out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: wf})
	if err != nil {
		t.Fatal(err)
	}
	id := out.ExecutionID
	awaitStatus(t, svc, wf, id, cardflow.ExecWaiting)
	// The store goes out of reach while the execution sleeps.
	st.failAdvance.Store(1000)
	testenv.WaitFor(t, "the state machine to end", func() bool { return st.fake.Status(id) != sfnfake.StatusRunning })
	if got := st.fake.Status(id); got != sfnfake.StatusFailed {
		t.Errorf("state machine: got %s, want FAILED", got)
	}
	ex, err := svc.GetExecution(ctx, wf, id)
	if err != nil {
		t.Fatal(err)
	}
	reason, _ := ex.WorkflowOutputPayload["error"].(string)
	if ex.Status != cardflow.ExecFailed || ex.WorkflowCurrentState != "pause" ||
		!strings.Contains(reason, "gave up after its retries: Error: the store cannot be reached") {
		t.Errorf("record: got %s in %q saying %q, want FAILED in pause saying the runner gave up and why", ex.Status, ex.WorkflowCurrentState, reason)
	}
	// Advance: one that slept, nine that failed (the first and eight
	// retries), and the one that gave up.
	if c, _ := st.fake.Counts(id); c.Invocations[advanceARN] != 11 {
		t.Errorf("Advance invocations: got %d, want 11", c.Invocations[advanceARN])
	}

	st.failAdvance.Store(0)
	if _, err := svc.RedriveExecution(ctx, app.RedriveInput{WorkflowID: wf, WorkflowExecutionID: id}); err != nil {
		t.Fatalf("redrive: %v", err)
	}
	awaitMachine(t, st.fake, id+"-r1")
	ex = awaitStatus(t, svc, wf, id, cardflow.ExecSucceeded)
	steps := 0
	for _, ev := range ex.WorkflowEventLog.Events {
		if ev.Type == cardflow.EventStepStarted && ev.StepID == "prep" {
			steps++
		}
	}
	if steps != 1 {
		t.Errorf("prep ran %d times, want once: the redrive goes on from pause", steps)
	}
}

// awaitStatus polls the execution until it has status.
func awaitStatus(t *testing.T, svc *app.Service, wf, id, status string) *cardflow.Execution {
	t.Helper()
	var ex *cardflow.Execution
	testenv.WaitFor(t, "execution "+id+" to be "+status, func() bool {
		var err error
		if ex, err = svc.GetExecution(testContext(), wf, id); err != nil {
			t.Fatal(err)
		}
		return ex.Status == status
	})
	return ex
}
