package localmode_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/webhooks"
)

// TestApprovalEventsReachWebhooks runs approvals on the local stack and
// checks what the organization's webhook receives: every status change
// and the decision, with who decided and how.
func TestApprovalEventsReachWebhooks(t *testing.T) {
	t.Parallel()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "acme", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "admin",
	})
	if _, err := st.Start(ctx); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var got []cardflow.Published
	var secret string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if err := webhooks.Verify(secret, r.Header, body, time.Now(), time.Minute); err != nil {
			t.Errorf("delivery: %v", err)
		}
		var ev cardflow.Published
		json.Unmarshal(body, &ev)
		got = append(got, ev)
	}))
	defer receiver.Close()
	hook, err := st.Service.AddWebhook(ctx, "acme", receiver.URL)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	secret = hook.Secret
	mu.Unlock()
	// Another organization's webhook hears nothing of acme's.
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("another organization's webhook got an event of acme")
	}))
	defer other.Close()
	if _, err := st.Service.AddWebhook(ctx, "globex", other.URL); err != nil {
		t.Fatal(err)
	}

	card, err := st.Service.SaveCard(ctx, app.SaveCardInput{CardName: "approve", CardPayload: map[string]any{
		"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "Approve?"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Service.PublishCard(ctx, card.CardID, card.CardVersion); err != nil {
		t.Fatal(err)
	}
	steps := []cardflow.Step{
		{ID: "start", Name: "Requested", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "approve", Name: "Manager approval", Type: cardflow.StepApproval, Config: map[string]any{
			"card_id": card.CardID, "approvers": []any{"ann@example.com"}, "policy": "first", "timeout": "PT1H",
		}},
		{ID: "done", Name: "Approved", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
	}
	w, err := st.Service.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "events", WorkflowSteps: steps,
		WorkflowConnections: []cardflow.Connection{{From: "start", To: "approve"}, {From: "approve", To: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Service.PublishWorkflow(ctx, w.WorkflowID, 1); err != nil {
		t.Fatal(err)
	}
	ann := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "acme", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "ann@example.com", Person: "ann@example.com",
	})

	tests := []struct {
		decision string
		want     []string
		status   string // after the decision
	}{
		{"approve", []string{cardflow.EventTypeStarted, cardflow.EventTypeWaiting, cardflow.EventTypeResumed, cardflow.EventTypeApprovalDecided, cardflow.EventTypeSucceeded}, "approved"},
		// No connection leaves on rejected: the execution fails.
		{"reject", []string{cardflow.EventTypeStarted, cardflow.EventTypeWaiting, cardflow.EventTypeResumed, cardflow.EventTypeApprovalDecided, cardflow.EventTypeFailed}, "rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.decision, func(t *testing.T) {
			out, err := st.Service.Trigger(ctx, app.TriggerInput{WorkflowID: w.WorkflowID, Body: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			id := cardflow.ApprovalIDOf(out.ExecutionID, 1)
			eventually(t, "the approval opens", func() bool {
				_, err := store.GetApproval(context.Background(), "acme", id)
				return err == nil
			})
			if _, err := st.Service.AnswerApproval(ann, app.AnswerApprovalInput{ApprovalID: id, Decision: tt.decision}); err != nil {
				t.Fatal(err)
			}
			var mine []cardflow.Published
			eventually(t, "the events arrive", func() bool {
				mu.Lock()
				defer mu.Unlock()
				mine = nil
				for _, ev := range got {
					if ev.ExecutionID == out.ExecutionID {
						mine = append(mine, ev)
					}
				}
				return len(mine) >= len(tt.want)
			})
			slices.SortFunc(mine, func(a, b cardflow.Published) int { return strings.Compare(a.ID, b.ID) })
			var types []string
			for _, ev := range mine {
				types = append(types, ev.Type)
				if ev.Type == cardflow.EventTypeApprovalDecided && (ev.Approver != "ann@example.com" || ev.Decision != tt.status || ev.StepID != "approve" || ev.Step != "Manager approval") {
					t.Errorf("got decision %+v, want ann@example.com %s in step approve", ev, tt.status)
				}
			}
			if !slices.Equal(types, tt.want) {
				t.Errorf("got %v, want %v", types, tt.want)
			}
		})
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, what, cond)
}
