package app_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// wakes records the runner's Wake calls.
type wakes struct {
	mu sync.Mutex
	n  int
}

func (w *wakes) Start(context.Context, cardflow.ExecutionRef) error { return nil }
func (w *wakes) Stop(context.Context, cardflow.ExecutionRef) error  { return nil }
func (w *wakes) Wake(context.Context, cardflow.ExecutionRef, *cardflow.Wait) error {
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
	return nil
}

func TestAnswerCard(t *testing.T) { onEachStore(t, answerCard) }

func answerCard(t *testing.T, open func(testing.TB) cardflow.Store) {
	store := open(t)
	// Ids of their own: the DynamoDB tables are shared.
	orgA, orgB, exID, wfID := "org-a-"+cardflow.NewID(time.Now()), "org-b-"+cardflow.NewID(time.Now()), cardflow.NewID(time.Now()), cardflow.NewID(time.Now())
	runner := &wakes{}
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	svc, err := app.New(store, app.Deps{Runner: runner}, app.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ms := now.UnixMilli()
	ex := &cardflow.Execution{
		WorkflowExecutionID: exID, WorkflowID: wfID, WorkflowVersion: 1, OrganizationID: orgA, WorkspaceID: "ws",
		Status: cardflow.ExecWaiting, CreatedOn: ms, ModifiedOn: ms,
		WorkflowDetails: cardflow.WorkflowDetails{WorkflowName: "wf", WorkflowSteps: []cardflow.Step{{ID: "approve", Name: "Manager approval", Type: cardflow.StepCard}}},
		State:           cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: "PO-1", Wait: 1},
	}
	if err := store.StartExecution(ctx, ex, &cardflow.Process{OrganizationID: orgA, ProcessID: "PO-1", WorkflowID: wfID, ExecutionID: exID, CreatedOn: ms}, nil); err != nil {
		t.Fatal(err)
	}
	as := func(org, actor string) context.Context {
		return cardflow.NewContextWithPrincipal(ctx, &cardflow.Principal{OrganizationID: org, Scopes: []string{cardflow.ScopeExecute}, Actor: actor})
	}
	answer := func(org, actor, decision string, wait int, execution string) (*app.AnswerOutput, error) {
		return svc.AnswerCard(as(org, actor), app.AnswerInput{ProcessID: "PO-1", ExecutionID: execution, Wait: wait, Payload: map[string]any{"decision": decision, "source": "SAP"}})
	}

	// The card went out before its wait opened: the answer is kept for it.
	out, err := answer(orgA, "teams:ann", "approve", 1, exID)
	if err != nil || !out.Resumed || out.StepName != "Manager approval" {
		t.Fatalf("early answer: got %+v, %v, want it kept for Manager approval", out, err)
	}
	p, _ := store.GetProcess(ctx, orgA, "PO-1")
	if p.Early == nil || p.Early.Actor != "teams:ann" || p.Early.Payload.(map[string]any)["source"] != cardflow.SourceTeams {
		t.Fatalf("process: got early %+v, want ann's answer with source TEAMS", p.Early)
	}
	// A second early answer reports the first.
	if out, err := answer(orgA, "teams:bob", "reject", 1, exID); err != nil || out.Resumed || out.Wait.Resume.Actor != "teams:ann" {
		t.Fatalf("second early answer: got %+v, %v, want ann's decision, not resumed", out, err)
	}

	// The wait opens without the early answer (say it came too late).
	p.Early, p.Waits = nil, 1
	p.Wait = &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: ms}
	if err := store.PutProcess(ctx, p); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, org, execution string
		wait                 int
		code                 string
	}{
		{"another organization", orgB, exID, 1, cardflow.ENOTFOUND},
		{"an earlier execution", orgA, "01KOLD", 1, cardflow.ECONFLICT},
		{"a later wait", orgA, exID, 3, cardflow.ECONFLICT},
	}
	for _, tt := range tests {
		if _, err := answer(tt.org, "teams:eve", "approve", tt.wait, tt.execution); cardflow.ErrorCode(err) != tt.code {
			t.Errorf("%s: got %v, want %s", tt.name, err, tt.code)
		}
	}
	out, err = answer(orgA, "teams:carl", "approve", 1, exID)
	if err != nil || !out.Resumed || out.Wait.Resume.Actor != "teams:carl" {
		t.Fatalf("answer: got %+v, %v, want carl's answer claiming the wait", out, err)
	}
	out, err = answer(orgA, "teams:dan", "reject", 1, exID)
	if err != nil || out.Resumed || out.Wait.Resume.Actor != "teams:carl" {
		t.Fatalf("second answer: got %+v, %v, want carl's decision, not resumed", out, err)
	}
	if runner.n != 1 {
		t.Errorf("got %d wakes, want 1", runner.n)
	}

	// A wait past its deadline takes no answer, even before it is marked.
	p, _ = store.GetProcess(ctx, orgA, "PO-1")
	p.Waits, p.Wait = 2, &cardflow.Wait{Seq: 2, StepID: "approve", OpenedOn: ms, Deadline: ms}
	if err := store.PutProcess(ctx, p); err != nil {
		t.Fatal(err)
	}
	out, err = answer(orgA, "teams:ann", "approve", 2, exID)
	if err != nil || out.Resumed || !out.Wait.TimedOut || out.Wait.Resume != nil {
		t.Fatalf("answer past the deadline: got %+v, %v, want a timed-out wait, not resumed", out, err)
	}

	// The execution moved on to its next wait: the old card is stale.
	if _, err := answer(orgA, "teams:ann", "approve", 1, exID); cardflow.ErrorCode(err) != cardflow.ECONFLICT || !strings.Contains(err.Error(), "moved on") {
		t.Errorf("stale card: got %v, want a conflict saying the workflow moved on", err)
	}
}
