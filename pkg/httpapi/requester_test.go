package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/teams"
)

// selfApproval is the config of an approval step that bob, ann and cy
// approve, two of them deciding, whose requester the trigger body names.
func selfApproval() map[string]any {
	return map[string]any{
		"approvers": []any{"ann@example.com", "bob@example.com", "cy@example.com"}, "policy": "quorum", "count": 2,
		"forbid_self_approval": "{{ input.requester }}",
	}
}

// TestSelfApprovalByWhoTriggered: bob triggers with his own key and names
// someone else as requester in the body. The execution records bob, he
// may not approve through the API, and the quorum counts him out: one
// rejection of the other two decides.
func TestSelfApprovalByWhoTriggered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann, bob, cy := e.personKey("org-a", "ann@example.com"), e.personKey("org-a", "bob@example.com"), e.personKey("org-a", "cy@example.com")
	wf := e.publishedQuorum(admin, selfApproval())
	exID := str(e.trigger(bob, "/v1/workflows/triggerworkflow/"+wf+"/1", map[string]any{"amount": 5000, "requester": "someone-else@example.com"}).body["service_execution_id"])
	ex := e.awaitStatus(admin, wf, exID, "WAITING")
	if got := ex["triggered_by"]; got != "bob@example.com" {
		t.Errorf("triggered_by: got %v, want bob@example.com", got)
	}
	id := cardflow.ApprovalIDOf(exID, 1)
	e.awaitApproval("org-a", id)
	r := e.do("GET", "/v1/approvals/getPendingApprovals?approver=ann@example.com", ann, nil)
	if items, _ := r.body["items"].([]any); len(items) != 1 || items[0].(map[string]any)["triggered_by"] != "bob@example.com" {
		t.Errorf("ann's inbox: got %s, want the approval asked by bob", r.raw)
	}

	answer := func(key, decision string) response {
		return e.do("POST", "/v1/approvals/answerApproval", key, map[string]any{"approval_id": id, "decision": decision})
	}
	if r := answer(bob, "approve"); r.status != 403 || !strings.Contains(r.msg(), "you requested this approval") {
		t.Errorf("bob approves his own request: got %d %s, want 403", r.status, r.raw)
	}
	if a := e.awaitApproval("org-a", id); len(a.Answers) != 0 || !a.Open() {
		t.Errorf("after bob's answer: got %d answers, status %s; want none, PENDING", len(a.Answers), a.Status)
	}
	if r := answer(ann, "approve"); r.status != 200 {
		t.Fatalf("ann approves: got %d %s", r.status, r.raw)
	}
	if r := answer(cy, "reject"); r.status != 200 || r.body["item"].(map[string]any)["status"] != "REJECTED" {
		t.Errorf("cy rejects: got %d %s, want the approval REJECTED (bob cannot make the quorum)", r.status, r.raw)
	}
	e.awaitStatus(admin, wf, exID, "FAILED")

	// A key of no person records its key id; the lists show it too.
	exID = str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1", map[string]any{"amount": 1, "requester": "dan@example.com"}).body["service_execution_id"])
	if got := str(e.awaitStatus(admin, wf, exID, "WAITING")["triggered_by"]); !strings.HasPrefix(got, "key:") {
		t.Errorf("triggered_by of a key of no person: got %q, want key: and its id", got)
	}
	for _, path := range []string{"/v1/workflows/getOrganizationExecutions", "/v1/workflows/getWorkflowExecutionHistory?workflow_id=" + wf} {
		r := e.do("GET", path, admin, nil)
		items, _ := r.body["items"].([]any)
		if len(items) != 2 || !strings.HasPrefix(str(items[0].(map[string]any)["triggered_by"]), "key:") || items[1].(map[string]any)["triggered_by"] != "bob@example.com" {
			t.Errorf("%s: got %s, want triggered_by on each item", path, r.raw)
		}
	}
}

// TestSelfApprovalByWhoTriggeredThroughTeams: neither bob's personal link
// nor his click on the bot's card counts, and both show who asked.
func TestSelfApprovalByWhoTriggeredThroughTeams(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	bob := e.personKey("org-a", "bob@example.com")
	body := map[string]any{"amount": 7000, "requester": "someone-else@example.com"}

	wf := e.teamsApprovalStep(admin, ownWebhooks(), selfApproval())
	exID := str(e.trigger(bob, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-1", body).body["service_execution_id"])
	var bodies []map[string]any
	for _, r := range awaitRequests(t, fake, "/webhook/", 3) {
		bodies = append(bodies, r.Body)
		if got := jsonOf(r.Body); !strings.Contains(got, "Requested by bob@example.com") {
			t.Errorf("webhook card: got %s, want it to say who asked", got)
		}
	}
	links := personalLinks(t, bodies)
	e.awaitStatus(admin, wf, exID, "WAITING")
	_, page := e.page(links["bob@example.com"])
	if !strings.Contains(page, "Requested by bob@example.com") {
		t.Errorf("bob's link page: got %s, want who asked", page)
	}
	status, page, _ := e.linkRequest("POST", e.srv.URL+"/v1/teams/respond", confirmForm(t, page))
	if status != 200 || !strings.Contains(page, "you may not approve it") {
		t.Errorf("bob confirms his link: got %d %s, want the self-approval refusal", status, page)
	}
	if a := e.awaitApproval("org-a", cardflow.ApprovalIDOf(exID, 1)); len(a.Answers) != 0 {
		t.Errorf("after bob's link: got %d answers, want none", len(a.Answers))
	}

	profile := map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2", "tenant_id": "tenant-1"}
	wf = e.teamsApprovalStep(admin, profile, selfApproval())
	exID = str(e.trigger(bob, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-2", body).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/connector/", 3)
	if got := jsonOf(posted[0].Body); !strings.Contains(got, "Requested by bob@example.com") {
		t.Errorf("bot card: got %s, want it to say who asked", got)
	}
	e.awaitStatus(admin, wf, exID, "WAITING")
	data := cardActions(t, posted[0].Body)["Approve"]["data"].(map[string]any)
	r := e.botPost(fake.Token(t, time.Now(), fake.ServiceURL()), botInvoke(fake, "bob", map[string]any{"decision": "approve", teams.DataKey: data[teams.DataKey]}))
	if got := jsonOf(r.body["value"]); r.status != 200 || !strings.Contains(got, "you may not approve it") {
		t.Errorf("bob clicks the bot's card: got %d %s, want the self-approval refusal", r.status, got)
	}
	if a := e.awaitApproval("org-a", cardflow.ApprovalIDOf(exID, 1)); len(a.Answers) != 0 {
		t.Errorf("after bob's click: got %d answers, want none", len(a.Answers))
	}
}

// closed checks that an ended execution's approval is CANCELLED, out of
// the inbox, and takes no answer through the API, unchanged.
func (e *env) closed(key, id string) *cardflow.Approval {
	e.t.Helper()
	// The engine closes it once the end is stored, a moment after.
	a := e.awaitApproval("org-a", id, func(a *cardflow.Approval) bool { return a.Status == cardflow.ApprovalCancelled })
	if r := e.do("GET", "/v1/approvals/getPendingApprovals", key, nil); r.status != 200 || r.body["count"] != 0.0 {
		e.t.Errorf("pending: got %d %s, want none", r.status, r.raw)
	}
	r := e.do("POST", "/v1/approvals/answerApproval", key, map[string]any{"approval_id": id, "decision": "approve"})
	if r.status != 409 || !strings.Contains(r.msg(), "was cancelled: its execution ended before it was decided") {
		e.t.Errorf("answer: got %d %s, want 409 saying it was cancelled", r.status, r.raw)
	}
	if after := e.awaitApproval("org-a", id); after.Revision != a.Revision || after.Status != cardflow.ApprovalCancelled || len(after.Answers) != 0 {
		e.t.Errorf("after the answer: got %+v, want the record unchanged", after)
	}
	return a
}

// TestCancelClosesApproval: cancelling an execution cancels its open
// approval; the bot's copies say so; clicks, links and the API get 409.
func TestCancelClosesApproval(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann := e.personKey("org-a", "ann@example.com")
	profile := map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2", "tenant_id": "tenant-1"}
	wf := e.teamsApprovalStep(admin, profile, map[string]any{"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-3", map[string]any{"amount": 300}).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/connector/", 2)
	id := cardflow.ApprovalIDOf(exID, 1)
	e.awaitApproval("org-a", id, func(a *cardflow.Approval) bool { return len(a.Posts) == 2 })
	e.awaitStatus(admin, wf, exID, "WAITING")
	if r := e.do("POST", "/v1/workflows/cancelExecution", admin, map[string]any{"workflow_id": wf, "workflow_execution_id": exID}); r.status != 200 {
		t.Fatalf("cancel: got %d %s", r.status, r.raw)
	}
	if a := e.closed(ann, id); a.DecidedBy == "" {
		t.Errorf("cancelled approval: got decided_by %q, want who cancelled", a.DecidedBy)
	}
	for i, u := range awaitRequests(t, fake, "/connector/", 4)[2:] {
		if got := jsonOf(u.Body); u.Method != "PUT" || !strings.Contains(got, "This approval was cancelled") || strings.Contains(got, "Action.") {
			t.Errorf("update %d: got %s %s, want the cancellation without buttons", i, u.Method, got)
		}
	}
	data := cardActions(t, posted[0].Body)["Approve"]["data"].(map[string]any)
	r := e.botPost(fake.Token(t, time.Now(), fake.ServiceURL()), botInvoke(fake, "ann", map[string]any{"decision": "approve", teams.DataKey: data[teams.DataKey]}))
	if got := jsonOf(r.body["value"]); r.status != 200 || !strings.Contains(got, "This approval was cancelled") {
		t.Errorf("ann clicks after the cancel: got %d %s, want the cancellation", r.status, got)
	}
	if a := e.awaitApproval("org-a", id); len(a.Answers) != 0 || a.Status != cardflow.ApprovalCancelled {
		t.Errorf("after the click: got %+v, want it unchanged", a)
	}

	// A personal link confirmed after the cancel gets 409.
	wf = e.teamsApprovalStep(admin, ownWebhooks(), map[string]any{"approvers": []any{"ann@example.com"}, "policy": "first"})
	exID = str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-4", map[string]any{"amount": 400}).body["service_execution_id"])
	var bodies []map[string]any
	for _, r := range awaitRequests(t, fake, "/webhook/", 1) {
		bodies = append(bodies, r.Body)
	}
	e.awaitStatus(admin, wf, exID, "WAITING")
	_, page := e.page(personalLinks(t, bodies)["ann@example.com"])
	form := confirmForm(t, page)
	if r := e.do("POST", "/v1/workflows/cancelExecution", admin, map[string]any{"workflow_id": wf, "workflow_execution_id": exID}); r.status != 200 {
		t.Fatalf("cancel: got %d %s", r.status, r.raw)
	}
	status, page, _ := e.linkRequest("POST", e.srv.URL+"/v1/teams/respond", form)
	if status != 409 || !strings.Contains(page, "was cancelled") {
		t.Errorf("ann confirms after the cancel: got %d %s, want 409 saying it was cancelled", status, page)
	}
	e.closed(ann, cardflow.ApprovalIDOf(exID, 1))
}

// TestFailureClosesApproval: an execution that fails in its approval step
// (the card cannot go out) or that its runner gives up on closes the
// approval the step opened.
func TestFailureClosesApproval(t *testing.T) {
	t.Parallel()
	e, _ := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann := e.personKey("org-a", "ann@example.com")
	wf := e.teamsApprovalStep(admin, map[string]any{"type": "webhook", "approver_webhooks": map[string]any{"ann@example.com": "unset-hook"}}, map[string]any{"approvers": []any{"ann@example.com"}, "policy": "first"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 1}).body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "FAILED")
	e.closed(ann, cardflow.ApprovalIDOf(exID, 1))

	wf = e.teamsApprovalStep(admin, ownWebhooks(), map[string]any{"approvers": []any{"ann@example.com"}, "policy": "first"})
	exID = str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 2}).body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	id := cardflow.ApprovalIDOf(exID, 1)
	e.awaitApproval("org-a", id)
	ref := cardflow.ExecutionRef{OrganizationID: "org-a", WorkflowID: wf, ExecutionID: exID}
	if _, err := cardflow.GiveUp(context.Background(), e.store, ref, "the runner gave up", time.Now()); err != nil {
		t.Fatal(err)
	}
	e.awaitStatus(admin, wf, exID, "FAILED")
	e.closed(ann, id)
}

// An answer to an approval whose execution ended without closing it (its
// runner stopped in between) closes it and gets 409.
func TestAnswerClosesApprovalOfEndedExecution(t *testing.T) {
	t.Parallel()
	e, _ := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann := e.personKey("org-a", "ann@example.com")
	wf := e.teamsApprovalStep(admin, ownWebhooks(), map[string]any{"approvers": []any{"ann@example.com"}, "policy": "first"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 3}).body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	id := cardflow.ApprovalIDOf(exID, 1)
	e.awaitApproval("org-a", id)
	// The execution ends as a crash would leave it: FAILED, its approval
	// still open.
	ex, err := e.store.GetExecution(context.Background(), "org-a", wf, exID)
	if err != nil {
		t.Fatal(err)
	}
	ex.Status = cardflow.ExecFailed
	if err := e.store.PutExecution(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	r := e.do("POST", "/v1/approvals/answerApproval", ann, map[string]any{"approval_id": id, "decision": "approve"})
	if r.status != 409 || !strings.Contains(r.msg(), "was cancelled") {
		t.Errorf("answer: got %d %s, want 409", r.status, r.raw)
	}
	e.closed(ann, id)
}
