package httpapi_test

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// linkTokens reads the tokens of the response links in a posted webhook
// card.
func linkTokens(t *testing.T, body map[string]any) []string {
	t.Helper()
	var out []string
	for _, a := range cardActions(t, body) {
		if u, err := url.Parse(str(a["url"])); err == nil && u.Query().Get("token") != "" {
			out = append(out, u.Query().Get("token"))
		}
	}
	return out
}

// shared is what the shared webhook (/webhook itself) received.
func shared(fake *teamstest.Server) []teamstest.Request {
	var out []teamstest.Request
	for _, r := range fake.Requests("/webhook") {
		if r.Path == "/webhook" {
			out = append(out, r)
		}
	}
	return out
}

// TestApprovalWebhookSharedIsRefused: a webhook profile whose approval
// copies would all go to one shared webhook (one chat or channel, whose
// every member could answer as each approver) is refused when the
// workflow is saved, with what to add; approver_webhooks that leave out a
// listed approver is refused too.
func TestApprovalWebhookSharedIsRefused(t *testing.T) {
	t.Parallel()
	e, _ := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	for _, c := range []struct {
		name    string
		profile map[string]any
		want    string
	}{
		{"shared webhook only", map[string]any{"type": "webhook", "webhook_secret": "approvals-hook"}, "no webhook of their own for ann@example.com, bob@example.com: add approver_webhooks"},
		{"one approver without", map[string]any{"type": "webhook", "webhook_secret": "approvals-hook", "approver_webhooks": map[string]any{"ann@example.com": "ann-hook"}}, "no webhook of their own for bob@example.com: add approver_webhooks"},
		{"not a person", map[string]any{"type": "webhook", "approver_webhooks": map[string]any{"ann": "ann-hook"}}, `approver_webhooks names "ann", which is neither`},
		{"one person twice", map[string]any{"type": "webhook", "approver_webhooks": map[string]any{"ann@example.com": "ann-hook", "ANN@example.com": "other-hook", "bob@example.com": "bob-hook"}}, `names "ann@example.com" twice`},
		{"not a secret name", map[string]any{"type": "webhook", "approver_webhooks": map[string]any{"ann@example.com": "https://x"}}, "which is not a secret name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, map[string]any{"card_name": "Approval", "card_payload": teamsCard()})
			cardID := str(r.body["item"].(map[string]any)["card_id"])
			body := map[string]any{
				"workflow_name":         "Purchase approval",
				"workflow_integrations": map[string]any{"teams": c.profile},
				"workflow_steps": []any{
					map[string]any{"id": "start", "name": "Requested", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
					map[string]any{"id": "approve", "name": "Panel approval", "type": "approval", "config": map[string]any{
						"card_id": cardID, "approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all"}},
					map[string]any{"id": "done", "name": "Approved", "type": "end", "config": map[string]any{"status": "SUCCEEDED"}},
				},
				"workflow_connections": []any{map[string]any{"from": "start", "to": "approve"}, map[string]any{"from": "approve", "to": "done"}},
			}
			r = e.do("POST", "/v1/workflows/saveWorkflow", admin, body)
			if r.status != 400 || !strings.Contains(str(r.body["message"]), c.want) {
				t.Errorf("saveWorkflow: got %d %s, want 400 saying %q", r.status, r.raw, c.want)
			}
		})
	}
}

// TestApprovalWebhooksArePersonal: with approver_webhooks each approver's
// webhook receives their copy alone, whose links name them, and no other
// approver's link; the shared webhook gets the card once without any link.
func TestApprovalWebhooksArePersonal(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	profile := ownWebhooks()
	profile["webhook_secret"] = "approvals-hook"
	wf := e.teamsApprovalStep(admin, profile, map[string]any{"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 900}).body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	awaitRequests(t, fake, "/webhook/", 2)
	e.awaitApproval("org-a", cardflow.ApprovalIDOf(exID, 1), func(a *cardflow.Approval) bool { return len(a.Sent) == 2 })

	tokens := map[string][]string{}
	for _, who := range []string{"ann", "bob"} {
		got := fake.Requests("/webhook/" + who)
		if len(got) != 1 {
			t.Fatalf("%s's webhook: got %d posts, want 1", who, len(got))
		}
		links := personalLinks(t, []map[string]any{got[0].Body})
		if _, ok := links[who+"@example.com"]; !ok || len(links) != 1 {
			t.Errorf("%s's webhook: got links of %v, want %s's", who, links, who)
		}
		tokens[who] = linkTokens(t, got[0].Body)
		if len(tokens[who]) != 2 {
			t.Fatalf("%s's webhook: got %d link tokens, want 2 (Approve, Reject)", who, len(tokens[who]))
		}
	}
	if n := len(fake.Requests("/webhook/cy")); n != 0 {
		t.Errorf("cy's webhook: got %d posts, want none (cy is no approver)", n)
	}
	// Nobody's bytes hold another approver's token.
	received := map[string][]byte{"bob": fake.Requests("/webhook/bob")[0].Raw, "ann": fake.Requests("/webhook/ann")[0].Raw}
	ann := shared(fake)
	if len(ann) != 1 {
		t.Fatalf("shared webhook: got %d posts, want the announcement", len(ann))
	}
	received["shared"] = ann[0].Raw
	for where, raw := range received {
		for who, toks := range tokens {
			if who == where {
				continue
			}
			for _, tok := range toks {
				if bytes.Contains(raw, []byte(tok)) {
					t.Errorf("%s's webhook received a link token of %s", where, who)
				}
			}
		}
	}
	if raw := received["shared"]; bytes.Contains(raw, []byte("/v1/teams/respond")) || !bytes.Contains(raw, []byte("Approvers answer from their own copies of this card: ann@example.com, bob@example.com.")) || !bytes.Contains(raw, []byte("Approve 900 EUR?")) {
		t.Errorf("shared webhook: got %s, want the card's text, no link, and who answers", raw)
	}
}

// TestApprovalWebhookTemplatedApprover: an approver given by a template,
// without a webhook of their own, fails the step when it opens with a
// plain reason; nobody's copy is sent.
func TestApprovalWebhookTemplatedApprover(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	wf := e.teamsApprovalStep(admin, ownWebhooks(), map[string]any{"approvers": []any{"ann@example.com", "{{ input.manager }}"}, "policy": "all"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 900, "manager": "dan@example.com"}).body["service_execution_id"])
	done := e.awaitStatus(admin, wf, exID, "FAILED")
	out, _ := done["workflow_output_payload"].(map[string]any)
	if reason := str(out["error"]); !strings.Contains(reason, "no webhook of their own for dan@example.com: add approver_webhooks") {
		t.Errorf("reason: got %q (output %v), want it to name dan and approver_webhooks", reason, out)
	}
	// The step fails before its wait opens, so nothing is posted later.
	if n := len(fake.Requests("/webhook")); n != 0 {
		t.Errorf("got %d webhook posts, want none", n)
	}
}

// TestApprovalWebhookReassignedWithoutOwn: a reassignment to a person
// without a webhook of their own sends them nothing, says so in the log,
// and the approval waits on; the other approver's answer still counts.
func TestApprovalWebhookReassignedWithoutOwn(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	wf := e.teamsApprovalStep(admin, ownWebhooks(), map[string]any{
		"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all", "allow_reassign": true})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 900}).body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	id := cardflow.ApprovalIDOf(exID, 1)
	e.awaitApproval("org-a", id, func(a *cardflow.Approval) bool { return len(a.Sent) == 2 })
	if r := e.do("POST", "/v1/approvals/reassignApproval", e.personKey("org-a", "ann@example.com"), map[string]any{"approval_id": id, "to": "dan@example.com"}); r.status != 200 {
		t.Fatalf("reassign: got %d %s", r.status, r.raw)
	}
	e.awaitApproval("org-a", id, func(a *cardflow.Approval) bool { return slices.Contains(a.Sent, "dan@example.com") })
	var found string
	testenv.WaitFor(t, "the event that dan's card was not sent", func() bool {
		ex := e.get("/v1/workflows/getWorkflowExecutionById", admin, "workflow_id", wf, "workflow_execution_id", exID).body["item"].(map[string]any)
		for _, ev := range ex["workflow_event_log"].(map[string]any)["events"].([]any) {
			if msg := str(ev.(map[string]any)["message"]); strings.HasPrefix(msg, "card not sent to dan@example.com") {
				found = msg
			}
		}
		return found != ""
	})
	if !strings.Contains(found, "no webhook of their own for dan@example.com: add approver_webhooks") {
		t.Errorf("event: got %q, want one saying dan's card was not sent and why", found)
	}
	if n := len(fake.Requests("/webhook")); n != 2 {
		t.Errorf("got %d webhook posts, want ann's and bob's copies only", n)
	}
	if r := e.do("POST", "/v1/approvals/answerApproval", e.personKey("org-a", "bob@example.com"), map[string]any{"approval_id": id, "decision": "approve"}); r.status != 200 {
		t.Fatalf("bob approves: got %d %s", r.status, r.raw)
	}
	a := e.awaitApproval("org-a", id)
	if a.Status != cardflow.ApprovalPending || len(a.Answers) != 1 {
		t.Errorf("approval: got %s with %d answers, want PENDING with bob's", a.Status, len(a.Answers))
	}
}
