package runnertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// racers is how many callers each race test sends at once.
const racers = 50

// testConcurrentResumes answers one wait with many resumes at once: exactly
// one claims it, every other one is a conflict, and the execution ends with
// the winner's answer.
func testConcurrentResumes(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	wf := approval(t, h, ctx)
	id := trigger(t, h, ctx, wf, "race-1", obj{"amount": 5000})
	await(t, h, ctx, wf, id, cardflow.ExecWaiting)

	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			_, errs[i] = h.Service.Resume(ctx, "race-1", fmt.Appendf(nil, `{"source": "TEAMS", "decision": "d%d"}`, i))
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("resumes %d and %d both succeeded, want exactly one", winner, i)
		case err == nil:
			winner = i
		case cardflow.ErrorCode(err) != cardflow.ECONFLICT:
			t.Errorf("resume %d: got %v, want success or CONFLICT", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("none of %d resumes succeeded: %v", racers, errs[0])
	}
	ex := await(t, h, ctx, wf, id, cardflow.ExecSucceeded, cardflow.ExecFailed)
	if got, want := ex.Status+" "+outputJSON(ex), fmt.Sprintf(`SUCCEEDED "d%d"`, winner); got != want {
		t.Errorf("got %s, want the winner's answer %s", got, want)
	}
}

// testConcurrentIdempotentTriggers sends one request with one
// Idempotency-Key many times at once: one execution is created, and every
// caller that gets an answer gets its id.
func testConcurrentIdempotentTriggers(t *testing.T, h Harness) {
	ctx := ctxOf("org-" + cardflow.NewID(time.Now()))
	wf := approval(t, h, ctx)
	ids := make([]string, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			out, err := h.Service.Trigger(ctx, app.TriggerInput{WorkflowID: wf, IdempotencyKey: "order-4711", Body: []byte(`{"amount": 5000}`)})
			if errs[i] = err; err == nil {
				ids[i] = out.ExecutionID
			}
		})
	}
	wg.Wait()
	var first string
	for i, err := range errs {
		switch {
		case err != nil:
			t.Errorf("trigger %d: got %v, want the one execution's id", i, err)
		case first == "":
			first = ids[i]
		case ids[i] != first:
			t.Errorf("trigger %d: got execution %s, want %s", i, ids[i], first)
		}
	}
	page, err := h.Service.ListWorkflowExecutions(ctx, wf, cardflow.ListOptions[cardflow.ExecutionKey]{Limit: cardflow.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].WorkflowExecutionID != first {
		t.Errorf("got %d executions, want exactly %s", len(page.Items), first)
	}
}
