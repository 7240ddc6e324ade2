package httpapi_test

import (
	"net/http"
	"testing"
)

// TestUnknownConfigKeyRefused: saveWorkflow answers an approval step with
// a key it does not know with a 400 naming the key and the keys it knows,
// and stores nothing.
func TestUnknownConfigKeyRefused(t *testing.T) {
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	cardID := str(e.do("POST", "/v1/adaptive-cards/saveCard", admin, cardBody("")).body["item"].(map[string]any)["card_id"])
	body := approvalBody(cardID)
	steps := body["workflow_steps"].([]any)
	steps[2] = map[string]any{"id": "approve", "name": "Two approvals", "type": "approval", "config": map[string]any{
		"card_id": cardID, "approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all", "channels": []any{"general"},
	}}
	before, _ := counts(t, e, admin)
	r := e.do("POST", "/v1/workflows/saveWorkflow", admin, body)
	if r.status != http.StatusBadRequest {
		t.Fatalf("got %d %s, want 400", r.status, r.raw)
	}
	want := `workflow_steps[2] (id "approve"): unknown config key "channels" (known: allow_reassign, approvers, card_id, card_version, count, data, delivery, due, escalation, forbid_self_approval, policy, remind_when_due, reminders, timeout)`
	if got := r.msg(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if after, _ := counts(t, e, admin); after != before {
		t.Errorf("workflows: got %v after the refused save, want %v", after, before)
	}
}
