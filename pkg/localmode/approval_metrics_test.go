package localmode_test

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// TestApprovalMetrics decides an approval through the use cases and finds
// the decision and its cycle time in the stack's Prometheus metrics.
func TestApprovalMetrics(t *testing.T) {
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
		OrganizationID: "acme", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "test",
	})
	if _, err := st.Start(ctx); err != nil {
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
	w, err := st.Service.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "metrics", WorkflowSteps: []cardflow.Step{
		{ID: "start", Name: "Requested", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "approve", Name: "Manager approval", Type: cardflow.StepApproval, Config: map[string]any{
			"card_id": card.CardID, "approvers": []any{"ann@example.com"}, "policy": "first", "timeout": "PT1H", "due": "PT30M",
		}},
		{ID: "done", Name: "Approved", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
	}, WorkflowConnections: []cardflow.Connection{{From: "start", To: "approve"}, {From: "approve", To: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Service.PublishWorkflow(ctx, w.WorkflowID, 1); err != nil {
		t.Fatal(err)
	}
	out, err := st.Service.Trigger(ctx, app.TriggerInput{WorkflowID: w.WorkflowID, Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := cardflow.ApprovalIDOf(out.ExecutionID, 1)
	eventually(t, "the approval opens", func() bool {
		_, err := store.GetApproval(context.Background(), "acme", id)
		return err == nil
	})
	ann := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "acme", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "ann@example.com", Person: "ann@example.com",
	})
	if _, err := st.Service.AnswerApproval(ann, app.AnswerApprovalInput{ApprovalID: id, Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	metrics := func() []byte {
		rec := httptest.NewRecorder()
		st.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return b
	}
	decided := []byte(`cardflow_approval_decisions_total{outcome="approved"} 1` + "\n")
	eventually(t, "the decision counted", func() bool { return bytes.Contains(metrics(), decided) })
	if b := metrics(); !bytes.Contains(b, []byte(`cardflow_approval_cycle_seconds_count{outcome="approved"} 1`+"\n")) ||
		!bytes.Contains(b, []byte(`cardflow_approval_cycle_seconds_bucket{outcome="approved",le="60"} 1`+"\n")) {
		t.Errorf("/metrics: got no cycle time of the decision in the first bucket:\n%s", bytes.Join(grepLines(b, "cardflow_approval_"), []byte("\n")))
	}
}

// grepLines returns the lines of b that start with prefix.
func grepLines(b []byte, prefix string) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(prefix)) {
			out = append(out, l)
		}
	}
	return out
}
