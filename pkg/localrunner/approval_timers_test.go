package localrunner_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/localrunner"
)

// fakeTime is the clock and the timers of the runner, the engine and the
// service: a test moves it on, and the timers due fire.
type fakeTime struct {
	mu     sync.Mutex
	t      time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func (f *fakeTime) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }

func (f *fakeTime) after(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	f.timers = append(f.timers, fakeTimer{at: f.t.Add(d), ch: ch})
	return ch
}

// pending reports whether a timer is set for at or later.
func (f *fakeTime) pending(at time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.ContainsFunc(f.timers, func(t fakeTimer) bool { return !t.at.Before(at) })
}

// add moves the clock on and fires the timers that are due.
func (f *fakeTime) add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
	kept := f.timers[:0]
	for _, t := range f.timers {
		if t.at.After(f.t) {
			kept = append(kept, t)
			continue
		}
		t.ch <- f.t
	}
	f.timers = kept
}

// eventually polls cond while the runner's goroutines work.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, what, cond)
}

// TestApprovalTimersOnTheLocalRunner: on the local runner, with its clock
// and timers injected, a reminder fires at its time and goes only to the
// approver who has not answered; a reassignment sends the card to the new
// approver at once; each is in the audit trail, and the new approver's
// answer decides.
func TestApprovalTimersOnTheLocalRunner(t *testing.T) {
	t.Parallel()
	clk := &fakeTime{t: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	store := boltStore(t, "cardflow.db")
	t.Cleanup(func() { store.Close() })
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(store, store, env, engine.WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	runner, err := localrunner.New(eng, store, localrunner.WithClock(clk.now), localrunner.WithTimer(clk.after))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	svc, err := app.New(store, app.Deps{Checker: eng, CardChecker: cards.Checker{}, Runner: runner}, app.WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	org := "org-" + cardflow.NewID(time.Now())
	as := func(person string) context.Context {
		return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
			OrganizationID: org, WorkspaceID: org + "-ws", Scopes: cardflow.AllScopes, Actor: person, Person: person,
		})
	}
	admin := as("admin@example.com")
	card, err := svc.SaveCard(admin, app.SaveCardInput{CardName: "approve", CardPayload: map[string]any{
		"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "Approve ${amount}?"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishCard(admin, card.CardID, card.CardVersion); err != nil {
		t.Fatal(err)
	}
	wf, err := svc.SaveWorkflow(admin, app.SaveWorkflowInput{WorkflowName: "two approvers", WorkflowSteps: []cardflow.Step{
		{ID: "start", Name: "Requested", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "approve", Name: "Both approve", Type: cardflow.StepApproval, Config: map[string]any{
			"card_id": card.CardID, "data": map[string]any{"amount": "{{ input.amount }}"},
			"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all", "allow_reassign": true,
			"reminders": []any{"PT24H"}, "timeout": "PT72H",
		}},
		{ID: "done", Name: "Approved", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
	}, WorkflowConnections: []cardflow.Connection{{From: "start", To: "approve"}, {From: "approve", To: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(admin, wf.WorkflowID, wf.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	opened := clk.now()
	out, err := svc.Trigger(admin, app.TriggerInput{WorkflowID: wf.WorkflowID, ProcessID: "PO-1", Body: []byte(`{"amount": 500}`)})
	if err != nil {
		t.Fatal(err)
	}
	approvalID := cardflow.ApprovalIDOf(out.ExecutionID, 1)
	eventually(t, "the timer of the reminder", func() bool { return clk.pending(opened.Add(24 * time.Hour)) })
	if _, err := svc.AnswerApproval(as("ann@example.com"), app.AnswerApprovalInput{ApprovalID: approvalID, Decision: "approve"}); err != nil {
		t.Fatal(err)
	}

	sent := func() []string {
		ds, _, err := store.ListDeliveries(context.Background(), org, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, d.Notice+" "+d.Approver)
		}
		slices.Sort(out)
		return out
	}
	clk.add(24*time.Hour + time.Second)
	eventually(t, "the reminder", func() bool { return len(sent()) == 3 })
	if got, want := sent(), []string{" ann@example.com", " bob@example.com", "reminder bob@example.com"}; !slices.Equal(got, want) {
		t.Errorf("after the reminder: got %q, want %q", got, want)
	}

	if _, err := svc.ReassignApproval(as("bob@example.com"), app.ReassignApprovalInput{ApprovalID: approvalID, To: "cy@example.com"}); err != nil {
		t.Fatal(err)
	}
	// The card goes out a moment before its event is in the log.
	eventually(t, "the card of the new approver and its event", func() bool {
		ex, err := store.GetExecution(context.Background(), org, wf.WorkflowID, out.ExecutionID)
		return err == nil && len(sent()) == 4 && slices.ContainsFunc(ex.WorkflowEventLog.Events, func(ev cardflow.Event) bool {
			return ev.Type == cardflow.EventApprovalSent
		})
	})
	if got := sent(); !slices.Contains(got, "added cy@example.com") {
		t.Errorf("after the reassignment: got %q, want the card sent to cy", got)
	}
	if _, err := svc.AnswerApproval(as("cy@example.com"), app.AnswerApprovalInput{ApprovalID: approvalID, Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	var ex *cardflow.Execution
	eventually(t, "the execution to succeed", func() bool {
		ex, err = store.GetExecution(context.Background(), org, wf.WorkflowID, out.ExecutionID)
		return err == nil && ex.Status == cardflow.ExecSucceeded
	})
	var events []string
	for _, ev := range ex.WorkflowEventLog.Events {
		if strings.HasPrefix(ev.Type, "Approval") {
			events = append(events, ev.Type+" "+ev.Actor+": "+ev.Message)
		}
	}
	want := []string{
		"ApprovalOpened : policy all; approvers ann@example.com, bob@example.com",
		"ApprovalAnswered ann@example.com: approve through api",
		"ApprovalReminded timer: reminder 1 of 1 to bob@example.com",
		"ApprovalReassigned bob@example.com: from bob@example.com to cy@example.com",
		"ApprovalSent timer: card sent to cy@example.com",
		"ApprovalAnswered cy@example.com: approve through api",
		"ApprovalDecided cy@example.com: approved",
	}
	if !slices.Equal(events, want) {
		t.Errorf("audit trail:\n got  %q\n want %q", events, want)
	}
}
