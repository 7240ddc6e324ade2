package sfnrunner_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/internal/fakes/sfnfake"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
)

// parkDef is one Park task as the runner's definition has it, with a
// short timeout, and nothing around it: the tests see how it ends.
const parkDef = `{"StartAt": "Park", "States": {
  "Park": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
    "Parameters": {"FunctionName": "${ParkFunctionArn}", "Payload": {
      "execution.$": "$.execution", "wait": 1, "process_id": "P-1", "timeout_seconds": 2, "task_token.$": "$$.Task.Token"}},
    "TimeoutSeconds": 2, "End": true}}}`

// parkFixture is an execution waiting on wait 1 of process P-1, and a
// fake Step Functions running parkDef with the real Park handler.
type parkFixture struct {
	store  *boltstore.Store
	fake   *sfnfake.Server
	runner *sfnrunner.Runner
	ref    cardflow.ExecutionRef
}

func newParkFixture(t *testing.T, change func(p *cardflow.Process)) *parkFixture {
	t.Helper()
	ctx := context.Background()
	store := boltStore(t, "park.db")
	t.Cleanup(func() { store.Close() })
	now := time.Now().UnixMilli()
	ex := &cardflow.Execution{
		WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "wf-1", WorkflowVersion: 1, OrganizationID: "org-1",
		Status: cardflow.ExecWaiting, CreatedOn: now, ModifiedOn: now,
		State: cardflow.ExecutionState{StepID: "ask", Phase: cardflow.PhaseWaiting, ProcessID: "P-1", Wait: 1},
	}
	p := &cardflow.Process{OrganizationID: "org-1", ProcessID: "P-1", WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID, CreatedOn: now}
	if err := store.StartExecution(ctx, ex, p, nil); err != nil {
		t.Fatal(err)
	}
	p.Waits, p.Wait = 1, &cardflow.Wait{Seq: 1, StepID: "ask", OpenedOn: now}
	if change != nil {
		change(p)
	}
	if err := store.PutProcess(ctx, p); err != nil {
		t.Fatal(err)
	}
	eng, err := localmode.NewEngine(store, store, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var h *sfnrunner.Handlers
	fake, err := sfnfake.New(sfnfake.Config{
		Definition:    []byte(parkDef),
		Substitutions: map[string]string{"ParkFunctionArn": parkARN},
		Functions: map[string]sfnfake.Func{parkARN: lambda(func(ctx context.Context, in sfnrunner.ParkInput) (any, error) {
			return nil, h.Park(ctx, in)
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	client := sfn.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *sfn.Options) { o.BaseEndpoint = aws.String(fake.URL) })
	if h, err = sfnrunner.NewHandlers(eng, store, client); err != nil {
		t.Fatal(err)
	}
	runner, err := sfnrunner.New(client, fake.StateMachineARN)
	if err != nil {
		t.Fatal(err)
	}
	f := &parkFixture{store: store, fake: fake, runner: runner, ref: ex.Ref()}
	if err := runner.Start(ctx, f.ref); err != nil {
		t.Fatal(err)
	}
	return f
}

// await polls until the state machine execution has ended.
func (f *parkFixture) await(t *testing.T) string {
	t.Helper()
	var s string
	testenv.WaitFor(t, "the execution to end", func() bool {
		s = f.fake.Status(f.ref.ExecutionID)
		return s != sfnfake.StatusRunning
	})
	return s
}

// parked polls until Park has stored its token, and returns the wait.
func (f *parkFixture) parked(t *testing.T) *cardflow.Process {
	t.Helper()
	var p *cardflow.Process
	testenv.WaitFor(t, "Park to store its token", func() bool {
		var err error
		if p, err = f.store.GetProcess(context.Background(), "org-1", "P-1"); err != nil {
			t.Fatal(err)
		}
		return p.Wait.Token != ""
	})
	return p
}

func TestParkAndWake(t *testing.T) {
	ctx := context.Background()
	resume := &cardflow.Resume{Source: cardflow.SourceTeams, Payload: map[string]any{"decision": "approve"}, Actor: "test"}
	for _, tt := range []struct {
		name string
		// before changes the process record before Park runs.
		before func(p *cardflow.Process)
		// after claims the wait once Park stored the token, or is nil.
		after      func(p *cardflow.Process)
		wantStatus string
		wantWake   string
	}{
		{"resumed after the token was stored", nil, func(p *cardflow.Process) { p.Wait.Resume = resume }, sfnfake.StatusSucceeded, ""},
		{"timed out by housekeeping", nil, func(p *cardflow.Process) { p.Wait.TimedOut = true }, sfnfake.StatusFailed, ""},
		{"resumed before the token was stored", func(p *cardflow.Process) { p.Wait.Resume = resume }, nil, sfnfake.StatusSucceeded, ""},
		{"cancelled before the token was stored", func(p *cardflow.Process) { p.Closed = true }, nil, sfnfake.StatusSucceeded, ""},
		{"a later wait opened", func(p *cardflow.Process) { p.Waits, p.Wait = 2, &cardflow.Wait{Seq: 2, StepID: "next"} }, nil, sfnfake.StatusSucceeded, ""},
		// A reassignment nudges the wait: Advance runs the step's timers.
		{"nudged after the token was stored", nil, func(*cardflow.Process) {}, sfnfake.StatusSucceeded, ""},
		{"nudged before the token was stored", func(p *cardflow.Process) { p.Wait.Nudged = true }, nil, sfnfake.StatusSucceeded, ""},
		// The claim is stored; what follows the task's end sees it.
		{"resumed after the task ended", nil, nil, sfnfake.StatusFailed, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newParkFixture(t, tt.before)
			if tt.before == nil {
				p := f.parked(t)
				if tt.after == nil {
					// Let the task time out, then resume.
					f.await(t)
					p.Wait.Resume = resume
				} else {
					tt.after(p)
				}
				if err := f.store.PutProcess(ctx, p); err != nil {
					t.Fatal(err)
				}
				if got := cardflow.ErrorCode(f.runner.Wake(ctx, f.ref, p.Wait)); got != tt.wantWake {
					t.Errorf("wake: got %q, want %q", got, tt.wantWake)
				}
			}
			if got := f.await(t); got != tt.wantStatus {
				t.Errorf("got %s, want %s", got, tt.wantStatus)
			}
		})
	}
}

func TestStartAndStop(t *testing.T) {
	ctx := context.Background()
	f := newParkFixture(t, nil)
	f.parked(t)
	if err := f.runner.Start(ctx, f.ref); err != nil {
		t.Errorf("start again while running: %v", err)
	}
	if err := f.runner.Stop(ctx, f.ref); err != nil {
		t.Fatal(err)
	}
	if got := f.await(t); got != sfnfake.StatusAborted {
		t.Errorf("got %s, want ABORTED", got)
	}
	if err := f.runner.Start(ctx, f.ref); err != nil {
		t.Errorf("start again after the end: %v", err)
	}
	if err := f.runner.Stop(ctx, f.ref); err != nil {
		t.Errorf("stop again: %v", err)
	}
	garbled := &cardflow.Wait{Seq: 1, StepID: "ask", Token: "not-a-token", Resume: &cardflow.Resume{Actor: "test"}}
	if got := cardflow.ErrorCode(f.runner.Wake(ctx, f.ref, garbled)); got != cardflow.ECONFLICT {
		t.Errorf("wake with a malformed token: got %q, want CONFLICT", got)
	}
	other := f.ref
	other.ExecutionID = "never-started"
	if err := f.runner.Stop(ctx, other); err != nil {
		t.Errorf("stop of an execution that never ran: %v", err)
	}
}

func TestAdvanceOutput(t *testing.T) {
	store := boltStore(t, "advance.db")
	st := newStack(t, store, store)
	ctx := testContext()
	svc := st.harness.Service
	cardID := publishCard(t, svc, ctx)
	run := func(typ string, cfg map[string]any) *cardflow.Execution {
		t.Helper()
		workflowID := publishWorkflow(t, svc, ctx, cardflow.Step{ID: "hold", Name: "hold", Type: typ, Config: cfg})
		out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: workflowID})
		if err != nil {
			t.Fatal(err)
		}
		var ex *cardflow.Execution
		testenv.WaitFor(t, "the execution to wait", func() bool {
			if ex, err = svc.GetExecution(ctx, workflowID, out.ExecutionID); err != nil {
				t.Fatal(err)
			}
			return ex.Status == cardflow.ExecWaiting
		})
		if typ != "delay" {
			// Park stores its token once the wait is open.
			testenv.WaitFor(t, "Park to store its token", func() bool {
				p, err := store.GetProcess(ctx, ex.OrganizationID, ex.State.ProcessID)
				return err == nil && p.Wait != nil && p.Wait.Token != ""
			})
		}
		return ex
	}
	advance := func(ex *cardflow.Execution) sfnrunner.AdvanceOutput {
		t.Helper()
		out, err := st.handlers.Advance(context.Background(), sfnrunner.AdvanceInput{Execution: ex.Ref()})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	for _, tt := range []struct {
		typ     string
		cfg     map[string]any
		timeout int64
	}{
		{"card", map[string]any{"card_id": cardID, "timeout": "PT1H"}, 3601},
		{"wait", map[string]any{"timeout": "P90D"}, sfnrunner.MaxWaitSeconds},
		{"wait", map[string]any{}, sfnrunner.MaxWaitSeconds},
	} {
		ex := run(tt.typ, tt.cfg)
		got := advance(ex)
		want := sfnrunner.AdvanceOutput{Status: cardflow.ExecWaiting, TimeoutSeconds: tt.timeout, Wait: 1, ProcessID: ex.WorkflowExecutionID}
		if got != want {
			t.Errorf("%s %v: got %+v, want %+v", tt.typ, tt.cfg, got, want)
		}
	}

	ex := run("delay", map[string]any{"duration": "PT1H"})
	got := advance(ex)
	wake, err := time.Parse(time.RFC3339, got.WakeAt)
	if err != nil || got.Status != sfnrunner.Sleeping || strings.Contains(got.WakeAt, ".") {
		t.Fatalf("delay: got %+v (%v), want SLEEPING until a whole second", got, err)
	}
	if at := time.UnixMilli(ex.State.WakeAt); wake.Before(at) || !wake.Before(at.Add(time.Second)) {
		t.Errorf("delay: wakes at %v, want the whole second at or after %v", wake, at)
	}
	if b, _ := json.Marshal(sfnrunner.AdvanceOutput{}); string(b) != `{"status":"","wake_at":"","timeout_seconds":0,"wait":0,"process_id":""}` {
		t.Errorf("AdvanceOutput omits fields the definition selects: %s", b)
	}
	if _, err := st.handlers.Advance(context.Background(), sfnrunner.AdvanceInput{}); err == nil {
		t.Error("Advance of no execution: got no error")
	}
}

// TestResumeAfterDeadline resumes a card wait after its deadline, while
// the Park task still runs: the resume is refused and changes nothing, and
// the execution takes its timeout.
func TestResumeAfterDeadline(t *testing.T) {
	store := boltStore(t, "deadline.db")
	st := newStack(t, store, store)
	ctx := testContext()
	svc := st.harness.Service
	cardID := publishCard(t, svc, ctx)
	workflowID := publishWorkflow(t, svc, ctx, cardflow.Step{ID: "ask", Name: "ask", Type: "card", Config: map[string]any{"card_id": cardID, "timeout": "PT1S"}})
	out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: workflowID, ProcessID: "LATE-1"})
	if err != nil {
		t.Fatal(err)
	}
	var deadline time.Time
	testenv.WaitFor(t, "Park to store its token", func() bool {
		p, err := store.GetProcess(context.Background(), "org-1", "LATE-1")
		if err != nil {
			t.Fatal(err)
		}
		if p.Wait != nil && p.Wait.Token != "" {
			deadline = time.UnixMilli(p.Wait.Deadline)
			return true
		}
		return false
	})
	time.Sleep(time.Until(deadline) + 10*time.Millisecond)
	if _, err := svc.Resume(ctx, "LATE-1", []byte(`{"decision": "approve"}`)); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
		t.Fatalf("resume after the deadline: got %v, want CONFLICT", err)
	}
	var ex *cardflow.Execution
	testenv.WaitFor(t, "the execution to end", func() bool {
		if ex, err = svc.GetExecution(ctx, workflowID, out.ExecutionID); err != nil {
			t.Fatal(err)
		}
		return !ex.Open()
	})
	if ex.Status != cardflow.ExecTimedOut {
		t.Errorf("got %s, want TIMED_OUT", ex.Status)
	}
}

// TestAdvanceRetried fails the first Advance of an execution: the
// definition retries it, and the retry is one more transition.
func TestAdvanceRetried(t *testing.T) {
	store := boltStore(t, "retry.db")
	st := newStack(t, store, store)
	ctx := testContext()
	svc := st.harness.Service
	workflowID := publishWorkflow(t, svc, ctx)
	for _, tt := range []struct {
		failures    int32
		transitions int
	}{
		{0, 3}, // Advance, Route, Succeeded
		{1, 4}, // and one retry
	} {
		st.failAdvance.Store(tt.failures)
		out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: workflowID})
		if err != nil {
			t.Fatal(err)
		}
		c := awaitMachine(t, st.fake, out.ExecutionID)
		if c.Transitions != tt.transitions || c.Invocations[advanceARN] != int(tt.failures)+1 {
			t.Errorf("%d failures: got %d transitions and %d Advance invocations, want %d and %d",
				tt.failures, c.Transitions, c.Invocations[advanceARN], tt.transitions, tt.failures+1)
		}
		ex, err := svc.GetExecution(ctx, workflowID, out.ExecutionID)
		if err != nil || ex.Status != cardflow.ExecSucceeded {
			t.Errorf("%d failures: got %v, %v, want SUCCEEDED", tt.failures, ex, err)
		}
	}
}

// testContext is the caller of the handler tests.
func testContext() context.Context {
	return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "org-1", WorkspaceID: "ws-1", Scopes: cardflow.AllScopes, Actor: "test",
	})
}

// publishCard publishes an empty card and returns its id.
func publishCard(t *testing.T, svc *app.Service, ctx context.Context) string {
	t.Helper()
	card, err := svc.SaveCard(ctx, app.SaveCardInput{CardName: "c", CardPayload: map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishCard(ctx, card.CardID, card.CardVersion); err != nil {
		t.Fatal(err)
	}
	return card.CardID
}

// publishWorkflow publishes start -> steps... -> done, a chain, and
// returns the workflow's id.
func publishWorkflow(t *testing.T, svc *app.Service, ctx context.Context, steps ...cardflow.Step) string {
	t.Helper()
	all := []cardflow.Step{{ID: "start", Name: "start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}}}
	all = append(all, steps...)
	all = append(all, cardflow.Step{ID: "done", Name: "done", Type: "end", Config: map[string]any{}})
	var conns []cardflow.Connection
	for i := 1; i < len(all); i++ {
		conns = append(conns, cardflow.Connection{From: all[i-1].ID, To: all[i].ID})
	}
	wf, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "w", WorkflowSteps: all, WorkflowConnections: conns})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(ctx, wf.WorkflowID, wf.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	return wf.WorkflowID
}

// TestAdvanceEndsUnreadable: an execution whose record cannot be read
// ends its state machine after one Advance, FAILED in the store where its
// head can be written, and as FAILED to Step Functions where nothing can.
func TestAdvanceEndsUnreadable(t *testing.T) {
	t.Run("state machine", func(t *testing.T) {
		st := newStack(t, boltStore(t, "unreadable.db"), boltStore(t, "outbox.db"))
		ctx := testContext()
		svc := st.harness.Service
		workflowID := publishWorkflow(t, svc, ctx)
		// A step output 10,000 levels deep, as outputs were stored before
		// their nesting was limited, makes the record unreadable.
		var deep any = "bottom"
		for range 10_000 {
			deep = []any{deep}
		}
		ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: workflowID, WorkflowVersion: 1,
			OrganizationID: "org-1", Status: cardflow.ExecRunning,
			State: cardflow.ExecutionState{StepID: "start", ProcessID: "P-deep", Outputs: map[string]any{"start": deep}}}
		p := &cardflow.Process{OrganizationID: "org-1", ProcessID: "P-deep", WorkflowID: workflowID, ExecutionID: ex.WorkflowExecutionID}
		if err := st.harness.Store.StartExecution(ctx, ex, p, nil); err != nil {
			t.Fatal(err)
		}
		if err := st.runner.Start(ctx, ex.Ref()); err != nil {
			t.Fatal(err)
		}
		id := ex.WorkflowExecutionID
		testenv.WaitFor(t, "the state machine execution to end", func() bool { return st.fake.Status(id) != sfnfake.StatusRunning })
		c, _ := st.fake.Counts(id)
		if got := st.fake.Status(id); got != sfnfake.StatusFailed || c.Invocations[advanceARN] != 1 {
			t.Errorf("state machine: got %s after %d Advance invocations, want FAILED after one", got, c.Invocations[advanceARN])
		}
		got, err := svc.GetExecution(ctx, workflowID, id)
		if err != nil || got.Status != cardflow.ExecFailed {
			t.Errorf("execution: got %v, %v, want it FAILED and readable", got, err)
		}
	})

	t.Run("nothing can be written", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "damaged.db")
		store, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "wf-1", WorkflowVersion: 1,
			OrganizationID: "org-1", Status: cardflow.ExecRunning, State: cardflow.ExecutionState{StepID: "start", ProcessID: "P-1"}}
		p := &cardflow.Process{OrganizationID: "org-1", ProcessID: "P-1", WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID}
		if err := store.StartExecution(t.Context(), ex, p, nil); err != nil {
			t.Fatal(err)
		}
		store.Close()
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("executions")).Put([]byte("org-1\x00wf-1\x00"+ex.WorkflowExecutionID), []byte("not JSON"))
		})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if store, err = boltstore.Open(path); err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		eng, err := localmode.NewEngine(store, store, localmode.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var logs strings.Builder
		client := sfn.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
		h, err := sfnrunner.NewHandlers(eng, store, client, sfnrunner.WithHandlerLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.Advance(t.Context(), sfnrunner.AdvanceInput{Execution: ex.Ref()})
		if err != nil || out != (sfnrunner.AdvanceOutput{Status: cardflow.ExecFailed}) {
			t.Errorf("Advance: got %+v, %v, want FAILED", out, err)
		}
		if !strings.Contains(logs.String(), "nor can the execution be marked FAILED") || !strings.Contains(logs.String(), ex.WorkflowExecutionID) ||
			strings.Contains(logs.String(), "not JSON") {
			t.Errorf("log: got %q, want the execution's ids and why it ends, and nothing of its record", logs.String())
		}
	})
}
