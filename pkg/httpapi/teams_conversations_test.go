package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/pkg/teams"
)

// TestTeamsCrossOrganizationPost: organization A's workflow cannot post
// through the shared bot into organization B's conversation. Saving a
// workflow that names it is refused, and a workflow saved while the
// conversation was A's fails its card step, posting nothing, once it is
// B's.
func TestTeamsCrossOrganizationPost(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	adminA, adminB := e.key("org-a", "read", "admin"), e.key("org-b", "read", "admin")
	run := e.key("org-a", "read", "execute")
	theirs := map[string]any{"conversation_id": "19:b-team@thread.tacv2", "service_url": fake.ServiceURL()}
	if r := e.do("POST", "/v1/teams/registerConversation", adminB, theirs); r.status != 200 {
		t.Fatalf("B registers its conversation: got %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/teams/registerConversation", adminA, theirs); r.status != 409 {
		t.Errorf("A registers B's conversation: got %d %s, want 409", r.status, r.raw)
	}
	if r := e.do("GET", "/v1/teams/listConversations", adminA, nil); r.status != 200 || strings.Contains(string(r.raw), "b-team") {
		t.Errorf("A lists conversations: got %d %s, want 200 without B's", r.status, r.raw)
	}

	r := e.do("POST", "/v1/adaptive-cards/saveCard", adminA, map[string]any{"card_name": "Approval", "card_payload": teamsCard()})
	cardID := str(r.body["item"].(map[string]any)["card_id"])
	e.do("POST", "/v1/adaptive-cards/publishCard", adminA, map[string]any{"card_id": cardID, "card_version": 1})
	body := approvalBody(cardID)
	body["workflow_integrations"] = map[string]any{"teams": map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:b-team@thread.tacv2"}}
	if r := e.do("POST", "/v1/workflows/saveWorkflow", adminA, body); r.status != 400 || !strings.Contains(r.msg(), `conversation "19:b-team@thread.tacv2" is not registered for this organization`) {
		t.Errorf("A saves a workflow posting into B's conversation: got %d %s, want 400 saying so", r.status, r.raw)
	}

	// A's conversation, in a workflow saved while it is A's, passes to B.
	wf := e.teamsApproval(adminA, map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:a-team@thread.tacv2"})
	if r := e.do("POST", "/v1/teams/removeConversation", adminB, map[string]any{"conversation_id": "19:a-team@thread.tacv2"}); r.status != 404 {
		t.Errorf("B removes A's conversation: got %d %s, want 404", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/teams/removeConversation", adminA, map[string]any{"conversation_id": "19:a-team@thread.tacv2"}); r.status != 200 {
		t.Fatalf("A removes its conversation: got %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/teams/registerConversation", adminB, map[string]any{"conversation_id": "19:a-team@thread.tacv2"}); r.status != 200 {
		t.Fatalf("B registers the conversation A left: got %d %s", r.status, r.raw)
	}
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 4800}).body["service_execution_id"])
	ex := e.awaitStatus(run, wf, id, "FAILED")
	if got := jsonOf(ex["workflow_output_payload"]); !strings.Contains(got, `conversation \"19:a-team@thread.tacv2\" is not one of them`) {
		t.Errorf("output: got %s, want the reason: the conversation is not the organization's", got)
	}
	for _, req := range fake.Requests("/connector/") {
		t.Errorf("the bot posted %s %s, want nothing posted", req.Method, req.Path)
	}
}

// TestTeamsCrossOrganizationClick: a click in organization B's
// conversation on a card that names organization A's execution resumes
// nothing, whoever clicks; the same card in A's conversation still
// answers.
func TestTeamsCrossOrganizationClick(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	adminA, adminB := e.key("org-a", "read", "admin"), e.key("org-b", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf := e.teamsApproval(adminA, map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2", "tenant_id": "tenant-1"})
	if r := e.do("POST", "/v1/teams/registerConversation", adminB, map[string]any{"conversation_id": "19:b-team@thread.tacv2", "tenant_id": "tenant-2"}); r.status != 200 {
		t.Fatalf("B registers its conversation: got %d %s", r.status, r.raw)
	}
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-9", map[string]any{"amount": 4800}).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/connector/", 1)[0]
	data := cardActions(t, posted.Body)["Approve"]["data"].(map[string]any)
	e.awaitWaitOpen("org-a", "PO-9")
	answer := map[string]any{"decision": "approve", teams.DataKey: data[teams.DataKey]}
	token := fake.Token(t, time.Now(), fake.ServiceURL())

	for _, tc := range []struct{ name, conversation, tenant string }{
		{"in B's conversation", "19:b-team@thread.tacv2", "tenant-2"},
		{"in a conversation nobody registered", "19:stranger@thread.tacv2", "tenant-9"},
		{"in A's conversation as reported by another tenant", "19:approvers@thread.tacv2", "tenant-2"},
	} {
		click := invoke(fake, "eve", answer)
		click["conversation"] = map[string]any{"id": tc.conversation, "tenantId": tc.tenant}
		if r := e.botPost(token, click); r.status != 404 || strings.Contains(string(r.raw), "Answered") {
			t.Errorf("%s: got %d %s, want 404", tc.name, r.status, r.raw)
		}
	}
	if ex := e.awaitStatus(run, wf, id, "WAITING"); resumedEvents(ex) != 0 {
		t.Fatalf("a click in another organization's conversation resumed the execution")
	}
	if r := e.botPost(token, invoke(fake, "ann", answer)); r.status != 200 || !strings.Contains(jsonOf(r.body["value"]), "Answered by Ann Example") {
		t.Errorf("click in A's conversation: got %d %s, want the decision card", r.status, r.raw)
	}
	e.awaitStatus(run, wf, id, "SUCCEEDED")
}

// TestTeamsInstallationRegisters: installing the bot in a conversation of
// a tenant the deployment maps to an organization registers it for that
// organization; one of a tenant mapped to none registers nothing. No other
// organization can claim the mapped tenant's conversations: naming the
// tenant is 403, and a claim that left it out moves to the tenant's
// organization at the first activity there.
func TestTeamsInstallationRegisters(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	adminA, adminB := e.key("org-a", "read", "admin"), e.key("org-b", "read", "admin")
	token := fake.Token(t, time.Now(), fake.ServiceURL())
	update := func(conversation, tenant string) map[string]any {
		return map[string]any{"type": "conversationUpdate", "channelId": "msteams", "serviceUrl": fake.ServiceURL(),
			"conversation": map[string]any{"id": conversation, "tenantId": tenant, "conversationType": "channel"},
			"membersAdded": []any{map[string]any{"id": "28:" + teamstest.AppID}}}
	}
	for _, a := range []map[string]any{update("19:installed@thread.tacv2", "tenant-1"), update("19:elsewhere@thread.tacv2", "tenant-9")} {
		if r := e.botPost(token, a); r.status != 200 {
			t.Fatalf("conversationUpdate: got %d %s", r.status, r.raw)
		}
	}
	r := e.do("GET", "/v1/teams/listConversations", adminA, nil)
	items, _ := r.body["items"].([]any)
	if r.status != 200 || len(items) != 1 {
		t.Fatalf("A's conversations: got %d %s, want the installed one", r.status, r.raw)
	}
	c := items[0].(map[string]any)
	if c["conversation_id"] != "19:installed@thread.tacv2" || c["source"] != "installation" || c["tenant_id"] != "tenant-1" || c["kind"] != "channel" {
		t.Errorf("installed conversation: got %v", c)
	}
	if r := e.do("POST", "/v1/teams/registerConversation", adminB, map[string]any{"conversation_id": "19:other@thread.tacv2", "tenant_id": "tenant-1"}); r.status != 403 {
		t.Errorf("B registers a conversation of A's tenant: got %d %s, want 403", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/teams/registerConversation", adminB, map[string]any{"conversation_id": "19:installed@thread.tacv2"}); r.status != 409 {
		t.Errorf("B registers A's installed conversation: got %d %s, want 409", r.status, r.raw)
	}
	// A conversation of A's tenant that B claimed without naming the tenant
	// moves to A once Teams shows whose it is.
	if r := e.do("POST", "/v1/teams/registerConversation", adminB, map[string]any{"conversation_id": "19:claimed@thread.tacv2"}); r.status != 200 {
		t.Fatalf("B claims a conversation: got %d %s", r.status, r.raw)
	}
	if r := e.botPost(token, map[string]any{"type": "message", "text": "hello", "channelId": "msteams", "serviceUrl": fake.ServiceURL(),
		"conversation": map[string]any{"id": "19:claimed@thread.tacv2", "tenantId": "tenant-1"}}); r.status != 200 {
		t.Fatalf("message: got %d %s", r.status, r.raw)
	}
	if r := e.do("GET", "/v1/teams/listConversations", adminB, nil); r.status != 200 || strings.Contains(string(r.raw), "19:claimed") {
		t.Errorf("B's conversations after A's tenant wrote there: got %d %s, want it gone", r.status, r.raw)
	}
	if r := e.do("GET", "/v1/teams/listConversations", adminA, nil); r.status != 200 || !strings.Contains(string(r.raw), `"19:claimed@thread.tacv2","service_url":"`+fake.ServiceURL()+`","tenant_id":"tenant-1","source":"first_contact"`) {
		t.Errorf("A's conversations after its tenant wrote there: got %d %s, want it registered by first contact", r.status, r.raw)
	}
	for _, body := range []map[string]any{{}, {"conversation_id": " 19:x "}, {"conversation_id": "19:x", "service_url": "http://example.com/"}, {"conversation_id": "19:x", "extra": 1}} {
		if r := e.do("POST", "/v1/teams/registerConversation", adminA, body); r.status != 400 {
			t.Errorf("register %v: got %d %s, want 400", body, r.status, r.raw)
		}
	}
}
