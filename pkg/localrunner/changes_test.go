package localrunner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/localrunner"
	"github.com/cardflow/cardflow/pkg/sample"
)

// signaled reports whether ch holds a signal (or is closed) now.
func signaled(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestChanges(t *testing.T) {
	t.Parallel()
	c := localrunner.NewChanges()
	a := cardflow.ExecutionRef{OrganizationID: "org", WorkflowID: "wf", ExecutionID: "a"}
	b := a
	b.ExecutionID = "b"
	ch, stop := c.Watch(a)
	c.ExecutionChanged(b)
	if signaled(ch) {
		t.Errorf("a change of another execution woke the watcher")
	}
	c.ExecutionChanged(a)
	c.ExecutionChanged(a) // several changes come as one signal
	if !signaled(ch) {
		t.Errorf("a change of the execution did not wake the watcher")
	}
	if signaled(ch) {
		t.Errorf("two changes gave two signals, want one")
	}
	stop()
	c.ExecutionChanged(a)
	if signaled(ch) {
		t.Errorf("a stopped watch was signaled")
	}

	open, stopOpen := c.Watch(a)
	c.Close()
	if _, ok := <-open; ok {
		t.Errorf("Close left a watch open")
	}
	stopOpen() // after Close: no double close
	late, stopLate := c.Watch(a)
	defer stopLate()
	if _, ok := <-late; ok {
		t.Errorf("a watch after Close is open, want it closed at once")
	}
}

// spyWatcher tells when a request has started watching.
type spyWatcher struct {
	cardflow.ExecutionWatcher
	watching chan struct{}
}

func (s spyWatcher) Watch(ref cardflow.ExecutionRef) (<-chan struct{}, func()) {
	ch, stop := s.ExecutionWatcher.Watch(ref)
	select {
	case s.watching <- struct{}{}:
	default:
	}
	return ch, stop
}

// drain empties the spy's signals of requests that have returned.
func (s spyWatcher) drain() {
	for signaled(s.watching) {
	}
}

// TestWaitWakesOnChange waits for executions through the service while
// the runner, the engine and a cancel change them: each waiting request
// answers with the change it waited for. A request that missed its
// wake-up would answer the WAITING execution after 25 s, and fail.
func TestWaitWakesOnChange(t *testing.T) {
	t.Parallel()
	store := boltStore(t, "cardflow.db")
	st, err := localmode.NewStack(store, store, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "org-1", WorkspaceID: "ws-1", Scopes: cardflow.AllScopes, Actor: "test"})
	ids, err := sample.Load(ctx, st.Service)
	if err != nil {
		t.Fatal(err)
	}
	// The stack's runner, engine and changes, with a service whose
	// watcher tells when a request watches.
	spy := spyWatcher{st.Changes, make(chan struct{}, 16)}
	svc, err := app.New(store, app.Deps{Runner: st.Runner}, app.WithWatcher(spy), app.WithNotifier(st.Changes))
	if err != nil {
		t.Fatal(err)
	}
	wf := ids.ApprovalWorkflowID
	start := func(pid string) string {
		t.Helper()
		out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: wf, Version: 2, ProcessID: pid,
			Body: []byte(`{"requester": "Ann", "item": "Dock", "amount": 1200}`)})
		if err != nil {
			t.Fatal(err)
		}
		// Follow it, change by change, until it waits for its card.
		for since := int64(0); ; {
			got := wait(t, svc, ctx, app.WaitInput{WorkflowID: wf, WorkflowExecutionID: out.ExecutionID, Until: app.UntilChange, Since: since, HasSince: true, Timeout: app.MaxWait})
			if got.Status == cardflow.ExecWaiting {
				return out.ExecutionID
			}
			since = got.ModifiedOn
		}
	}
	for _, c := range []struct {
		name   string
		until  string
		change func(pid, id string) error
		want   string
	}{
		{"resumed to the end", app.UntilFinal, func(pid, _ string) error {
			_, err := svc.Resume(ctx, pid, []byte(`{"source": "TEAMS", "decision": "approve"}`))
			return err
		}, cardflow.ExecSucceeded},
		{"cancelled", app.UntilChange, func(_, id string) error {
			_, err := svc.Cancel(ctx, app.CancelInput{WorkflowID: wf, WorkflowExecutionID: id})
			return err
		}, cardflow.ExecCancelled},
	} {
		t.Run(c.name, func(t *testing.T) {
			pid := "PO-" + c.want
			id := start(pid)
			spy.drain()
			answer := make(chan head, 1)
			go func() {
				answer <- wait(t, svc, ctx, app.WaitInput{WorkflowID: wf, WorkflowExecutionID: id, Until: c.until, Timeout: app.MaxWait})
			}()
			<-spy.watching // the request watches: change the execution now
			if err := c.change(pid, id); err != nil {
				t.Fatal(err)
			}
			if got := <-answer; got.Status != c.want {
				t.Errorf("got %s, want %s", got.Status, c.want)
			}
		})
	}
}

type head struct {
	Status     string `json:"status"`
	ModifiedOn int64  `json:"modified_on"`
}

// wait calls WaitForExecutionJSON and decodes the answer's status and
// modified_on.
func wait(t *testing.T, svc *app.Service, ctx context.Context, in app.WaitInput) head {
	var h head
	b, err := svc.WaitForExecutionJSON(ctx, in)
	if err != nil {
		t.Error(err)
		return h
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Error(err)
	}
	return h
}
