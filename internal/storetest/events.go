package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// pendingOf returns the types of the pending events of one execution, in
// the order the store lists them.
func pendingOf(t *testing.T, s cardflow.Store, executionID string) ([]string, []*cardflow.Published) {
	t.Helper()
	// Other subtests share the store: read it all, a page at a time.
	var all []*cardflow.Published
	for after := ""; ; {
		page, err := s.ListPendingEvents(t.Context(), after, 50)
		mustOK(t, "list pending events", err)
		for i, ev := range page {
			if ev.ID <= after || i > 0 && ev.ID <= page[i-1].ID {
				t.Fatalf("pending events after %q: got %s out of id order", after, ev.ID)
			}
		}
		all = append(all, page...)
		if len(page) < 50 {
			break
		}
		after = page[len(page)-1].ID
	}
	var types []string
	var mine []*cardflow.Published
	for _, ev := range all {
		if ev.ExecutionID == executionID {
			types = append(types, ev.Type)
			mine = append(mine, ev)
		}
	}
	return types, mine
}

func testEvents(t *testing.T, e env) {
	t.Run("WrittenWithTheExecution", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		ex := execution(org, "WF1")
		ex.Status = cardflow.ExecRunning
		ex.WorkflowEventLog = cardflow.EventLog{Events: []cardflow.Event{{At: 1, Type: cardflow.EventStarted}}, Total: 1}
		mustOK(t, "start", s.StartExecution(t.Context(), ex, process(ex, "PO-"+ex.WorkflowExecutionID), nil))
		got, _ := pendingOf(t, s, ex.WorkflowExecutionID)
		if want := []string{cardflow.EventTypeStarted}; !slices.Equal(got, want) {
			t.Fatalf("after start: got %v, want %v", got, want)
		}

		stale := execution(org, "WF1")
		*stale = *ex
		ex.Status = cardflow.ExecWaiting
		ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events, cardflow.Event{At: 2, Type: cardflow.EventWaiting, StepID: "approve", Step: "Approve"})
		ex.WorkflowEventLog.Total++
		mustOK(t, "put", s.PutExecution(t.Context(), ex))
		// A write that loses to another stores no event.
		stale.Status = cardflow.ExecCancelled
		stale.WorkflowEventLog.Events = append(slices.Clone(stale.WorkflowEventLog.Events), cardflow.Event{At: 2, Type: cardflow.EventCancelled})
		stale.WorkflowEventLog.Total++
		wantCode(t, "stale put", s.PutExecution(t.Context(), stale), cardflow.ECONFLICT)
		// A write that changes no status stores none either.
		ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events, cardflow.Event{At: 3, Type: cardflow.EventApprovalAnswered})
		ex.WorkflowEventLog.Total++
		mustOK(t, "put an answer", s.PutExecution(t.Context(), ex))

		got, pending := pendingOf(t, s, ex.WorkflowExecutionID)
		if want := []string{cardflow.EventTypeStarted, cardflow.EventTypeWaiting}; !slices.Equal(got, want) {
			t.Fatalf("after wait: got %v, want %v", got, want)
		}
		w := pending[1]
		if w.OrganizationID != org || w.WorkflowID != "WF1" || w.WorkflowVersion != 1 || w.Status != cardflow.ExecWaiting || w.Time != 2 || w.StepID != "approve" {
			t.Errorf("got waiting event %+v, want it of %s/WF1 version 1, WAITING at 2 in step approve", w, org)
		}

		mustOK(t, "delete", s.DeletePendingEvents(t.Context(), pending[:1]))
		if got, _ := pendingOf(t, s, ex.WorkflowExecutionID); !slices.Equal(got, []string{cardflow.EventTypeWaiting}) {
			t.Errorf("after deleting the first: got %v, want only the waiting event", got)
		}
		mustOK(t, "delete again", s.DeletePendingEvents(t.Context(), pending))
		if got, _ := pendingOf(t, s, ex.WorkflowExecutionID); len(got) != 0 {
			t.Errorf("after deleting all: got %v, want none", got)
		}
	})

	t.Run("CreateExecution", func(t *testing.T) {
		s := e.store(t)
		ex := execution(newOrg(), "WF1")
		ex.Status = cardflow.ExecSucceeded
		ex.WorkflowEventLog = cardflow.EventLog{Events: []cardflow.Event{{At: 1, Type: cardflow.EventStarted}, {At: 2, Type: cardflow.EventSucceeded}}, Total: 2}
		mustOK(t, "create", s.CreateExecution(t.Context(), ex))
		if got, _ := pendingOf(t, s, ex.WorkflowExecutionID); !slices.Equal(got, []string{cardflow.EventTypeStarted, cardflow.EventTypeSucceeded}) {
			t.Errorf("got %v, want started and succeeded", got)
		}
	})

	t.Run("Webhooks", func(t *testing.T) {
		s := e.store(t)
		org, other := newOrg(), newOrg()
		w := &cardflow.Webhook{WebhookID: newID(), OrganizationID: org, URL: "http://127.0.0.1:9/hook", Secret: "s3cret", CreatedOn: 1}
		mustOK(t, "create", s.CreateWebhook(t.Context(), w))
		wantCode(t, "create twice", s.CreateWebhook(t.Context(), w), cardflow.ECONFLICT)
		wantCode(t, "create without URL", s.CreateWebhook(t.Context(), &cardflow.Webhook{WebhookID: newID(), OrganizationID: org}), cardflow.EINVALID)
		w2 := &cardflow.Webhook{WebhookID: newID(), OrganizationID: other, URL: "http://127.0.0.1:9/other", Secret: "x", CreatedOn: 2}
		mustOK(t, "create another organization's", s.CreateWebhook(t.Context(), w2))

		got, err := s.ListWebhooks(t.Context(), org)
		mustOK(t, "list", err)
		sameJSON(t, "list of the organization", got, []*cardflow.Webhook{w})
		all, err := s.ListWebhooks(t.Context(), "")
		mustOK(t, "list all", err)
		var ids []string
		for _, x := range all {
			ids = append(ids, x.WebhookID)
		}
		if !slices.Contains(ids, w.WebhookID) || !slices.Contains(ids, w2.WebhookID) {
			t.Errorf("list of all: got %v, want both %s and %s", ids, w.WebhookID, w2.WebhookID)
		}

		rotated, err := s.RotateWebhookSecret(t.Context(), org, w.WebhookID, "n3w", 5000)
		mustOK(t, "rotate", err)
		want := *w
		want.Secret, want.PreviousSecret, want.PreviousSecretUntil = "n3w", "s3cret", 5000
		sameJSON(t, "rotated", rotated, &want)
		got, err = s.ListWebhooks(t.Context(), org)
		mustOK(t, "list after rotate", err)
		sameJSON(t, "list after rotate", got, []*cardflow.Webhook{&want})
		_, err = s.RotateWebhookSecret(t.Context(), other, w.WebhookID, "theirs", 5000)
		wantCode(t, "rotate from another organization", err, cardflow.ENOTFOUND)
		_, err = s.RotateWebhookSecret(t.Context(), org, newID(), "none", 5000)
		wantCode(t, "rotate a missing webhook", err, cardflow.ENOTFOUND)

		// Rotations at once each replace the secret another left: none
		// keeps a previous secret that another also kept.
		var mu sync.Mutex
		var wg sync.WaitGroup
		previous := map[string]bool{}
		for i := range 4 {
			wg.Go(func() {
				r, err := s.RotateWebhookSecret(t.Context(), org, w.WebhookID, fmt.Sprintf("at-once-%d", i), 6000)
				if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
					return
				}
				if err != nil {
					t.Errorf("rotate at once: %v", err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if previous[r.PreviousSecret] {
					t.Errorf("two rotations at once both replaced %q", r.PreviousSecret)
				}
				previous[r.PreviousSecret] = true
			})
		}
		wg.Wait()

		wantCode(t, "delete from another organization", s.DeleteWebhook(t.Context(), other, w.WebhookID), cardflow.ENOTFOUND)
		mustOK(t, "delete", s.DeleteWebhook(t.Context(), org, w.WebhookID))
		wantCode(t, "delete twice", s.DeleteWebhook(t.Context(), org, w.WebhookID), cardflow.ENOTFOUND)
		got, err = s.ListWebhooks(t.Context(), org)
		mustOK(t, "list after delete", err)
		if len(got) != 0 {
			t.Errorf("after delete: got %d webhooks, want none", len(got))
		}
	})
}
